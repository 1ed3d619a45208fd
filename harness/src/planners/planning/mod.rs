//! What only planners use: cost tables per condition and plan costs ([`costs`]), the plan
//! checker ([`plancheck`]) and the classical mission planner ([`mission`]).
//!
//! They live with the harness because the harness's planners and tools are their only users; the
//! farm model they stand on is `acres_farm`.

pub mod costs;
pub mod learn;
pub mod mission;
pub mod plancheck;

/// A field whose route stays blocked this long is skipped, s (the scripted planner's rule and the
/// classical rule set's).
pub const GIVE_UP_S: f64 = 120.0;
