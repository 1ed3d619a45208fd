//! `builtin_interfaces`, `std_msgs`, `rosgraph_msgs` and `unique_identifier_msgs`: time, the
//! header, colours, the clock and goal identifiers.

/// `builtin_interfaces`: time and duration.
pub mod builtin_interfaces {
    use crate::macros::message;

    message! {
        /// A point in ROS time.
        #[derive(Default, Copy, Eq, Hash, PartialOrd, Ord)]
        Time = "builtin_interfaces" / "msg" / "Time" {
            /// Whole seconds, s.
            sec: i32,
            /// Nanoseconds to add, ns, in `0..1e9`.
            nanosec: u32,
        }
    }

    message! {
        /// A span of ROS time.
        #[derive(Default, Copy, Eq, Hash, PartialOrd, Ord)]
        Duration = "builtin_interfaces" / "msg" / "Duration" {
            /// Whole seconds, s.
            sec: i32,
            /// Nanoseconds to add, ns, in `0..1e9`.
            nanosec: u32,
        }
    }

    /// Splits seconds into whole seconds (floor, saturating at the `i32` range) and nanoseconds.
    fn split_s(t_s: f64) -> (i32, u32) {
        let total_ns = (t_s * 1e9).round();
        let total_ns = if total_ns.is_nan() { 0.0 } else { total_ns };
        let sec = (total_ns / 1e9).floor();
        let sec_i = sec.clamp(i32::MIN as f64, i32::MAX as f64) as i32;
        let nanosec = (total_ns - sec * 1e9).clamp(0.0, 999_999_999.0) as u32;
        (sec_i, nanosec)
    }

    impl Time {
        /// The time `t_s` seconds after the epoch (mission time on the simulation clock), rounded
        /// to the nanosecond.
        pub fn from_secs_f64(t_s: f64) -> Self {
            let (sec, nanosec) = split_s(t_s);
            Self { sec, nanosec }
        }
        /// Seconds since the epoch, s.
        pub fn as_secs_f64(&self) -> f64 {
            self.sec as f64 + self.nanosec as f64 * 1e-9
        }
    }

    impl Duration {
        /// A duration of `dt_s` seconds, rounded to the nanosecond.
        pub fn from_secs_f64(dt_s: f64) -> Self {
            let (sec, nanosec) = split_s(dt_s);
            Self { sec, nanosec }
        }
        /// The duration, s.
        pub fn as_secs_f64(&self) -> f64 {
            self.sec as f64 + self.nanosec as f64 * 1e-9
        }
    }
}

/// `std_msgs`: the header and colours.
pub mod std_msgs {
    use super::builtin_interfaces::Time;
    use crate::macros::message;

    message! {
        /// Time and frame of stamped data.
        #[derive(Default)]
        Header = "std_msgs" / "msg" / "Header" {
            /// When the data was taken.
            stamp: Time,
            /// The coordinate frame of the data.
            frame_id: String,
        }
    }

    message! {
        /// A colour with opacity, each part 0..1.
        #[derive(Default, Copy)]
        ColorRGBA = "std_msgs" / "msg" / "ColorRGBA" {
            /// Red, 0..1.
            r: f32,
            /// Green, 0..1.
            g: f32,
            /// Blue, 0..1.
            b: f32,
            /// Opacity, 0..1.
            a: f32,
        }
    }
}

/// `rosgraph_msgs`: the simulation clock.
pub mod rosgraph_msgs {
    use super::builtin_interfaces::Time;
    use crate::macros::message;

    message! {
        /// The current time, on `/clock`.
        #[derive(Default, Copy)]
        Clock = "rosgraph_msgs" / "msg" / "Clock" {
            /// The time.
            clock: Time,
        }
    }
}

/// `unique_identifier_msgs`: UUIDs (action goal identifiers).
pub mod unique_identifier_msgs {
    use crate::macros::message;

    message! {
        /// A universally unique identifier (RFC 4122), 16 bytes.
        #[derive(Default, Copy, Eq, Hash, PartialOrd, Ord)]
        UUID = "unique_identifier_msgs" / "msg" / "UUID" {
            /// The bytes.
            uuid: [u8; 16],
        }
    }
}
