//! The vehicle: the scan function, path follower, shield, trajectory checker and skill server.
