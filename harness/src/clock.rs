//! The wall clock: UNIX seconds, for the rows' `wall` column and the link's receive times. The
//! mission clock is the world's; nothing that decides a run's course reads this one.

/// Wall time, UNIX seconds.
pub fn wall_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}
