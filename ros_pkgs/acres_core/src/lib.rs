//! ACRES Core: the simulated world (vehicle kinematics and energy, conditions, objects, contact, LiDAR).
