//! `message!`: one ROS message as a Rust struct with its CDR form, its names, its schema text,
//! its field names and its example values. The fields must be in the `.msg` order (a test
//! compares them with the text).

/// Defines a message struct `$name` for the ROS type `$pkg/$kind/$ros`; its `.msg` text is
/// `msg/$pkg/$ros.msg` in this crate.
macro_rules! message {
    (
        $(#[$meta:meta])*
        $name:ident = $pkg:literal / $kind:literal / $ros:literal {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $crate::cdr::Cdr for $name {
            fn write(&self, w: &mut $crate::cdr::Writer) {
                $( $crate::cdr::Cdr::write(&self.$field, w); )*
            }
            fn read(r: &mut $crate::cdr::Reader<'_>) -> Result<Self, $crate::cdr::CdrError> {
                Ok(Self { $( $field: $crate::cdr::Cdr::read(r)?, )* })
            }
        }

        impl $crate::Message for $name {
            const ROS_NAME: &'static str = concat!($pkg, "/", $kind, "/", $ros);
            const DDS_NAME: &'static str = concat!($pkg, "::", $kind, "::dds_::", $ros, "_");
            const SCHEMA: &'static $crate::schema::Schema = &$crate::schema::Schema {
                name: concat!($pkg, "/", $ros),
                text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/msg/", $pkg, "/", $ros, ".msg")),
            };
            const FIELDS: &'static [&'static str] = &[$( stringify!($field) ),*];
        }

        impl $crate::example::Example for $name {
            fn example(g: &mut $crate::example::Gen) -> Self {
                Self { $( $field: $crate::example::Example::example(g), )* }
            }
        }
    };
}

pub(crate) use message;
