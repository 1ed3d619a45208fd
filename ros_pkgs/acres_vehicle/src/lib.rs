//! The vehicle: what runs on the vehicle's computer.
//!
//! - [`scan`]: the scan function (360 ranges, 45° sectors, obstacle distance ahead).

pub mod scan;
