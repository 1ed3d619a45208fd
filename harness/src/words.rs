//! `words!`: `as_str()` and `Display` for the closed word sets of rows and of the planner
//! interface (serde enums in snake_case), from one list of variant and word pairs.

/// Implements `as_str()` and `Display` from a list of variant and word pairs.
macro_rules! words {
    ($ty:ident { $($variant:ident => $word:literal),+ $(,)? }) => {
        impl $ty {
            /// The word of this value as it is written in a row.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $word),+
                }
            }

            /// Every value with its word (all of them: `as_str`'s match is exhaustive), for the
            /// test that each word is serde's.
            pub const WORDS: &'static [($ty, &'static str)] = &[$(($ty::$variant, $word)),+];
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}
