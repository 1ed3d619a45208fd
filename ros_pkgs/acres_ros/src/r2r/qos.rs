//! QoS profiles equal to rclcpp's, as r2r (rcl) takes them: the same profiles as the
//! ros2-client backend's `qos` module, by the same names.

pub use r2r::QosProfile;

/// rclcpp's default (`rmw_qos_profile_default`): reliable, volatile, KeepLast(10).
pub fn default_profile() -> QosProfile {
    QosProfile::default().reliable().volatile().keep_last(10)
}

/// rclcpp's `SensorDataQoS` (`rmw_qos_profile_sensor_data`): best effort, volatile, KeepLast(5).
pub fn sensor_data() -> QosProfile {
    QosProfile::sensor_data().best_effort().volatile().keep_last(5)
}

/// `/clock` as rclcpp's clock subscription and publishers use it: best effort, KeepLast(1).
pub fn clock() -> QosProfile {
    sensor_data().keep_last(1)
}

/// `/tf`: rclcpp's default (tf2_ros uses KeepLast(100); readers with KeepLast(10) match).
pub fn tf() -> QosProfile {
    default_profile().keep_last(100)
}

/// rclcpp's services (`rmw_qos_profile_services_default`): reliable, volatile, KeepLast(10).
pub fn services() -> QosProfile {
    default_profile()
}

/// rcl_action's status topic (`rcl_action_qos_profile_status_default`): reliable,
/// transient local, KeepLast(1). (rcl_action sets the action's QoS itself on this backend.)
pub fn action_status() -> QosProfile {
    default_profile().transient_local().keep_last(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use r2r::qos::{DurabilityPolicy, HistoryPolicy, ReliabilityPolicy};

    #[test]
    fn profiles_equal_rclcpps() {
        let d = default_profile();
        assert_eq!(d.reliability, ReliabilityPolicy::Reliable);
        assert_eq!(d.durability, DurabilityPolicy::Volatile);
        assert_eq!((d.history, d.depth), (HistoryPolicy::KeepLast, 10));
        let s = sensor_data();
        assert_eq!(s.reliability, ReliabilityPolicy::BestEffort);
        assert_eq!((s.history, s.depth), (HistoryPolicy::KeepLast, 5));
        let st = action_status();
        assert_eq!(st.durability, DurabilityPolicy::TransientLocal);
        assert_eq!(st.depth, 1);
    }
}
