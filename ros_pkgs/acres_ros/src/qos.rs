//! QoS profiles equal to rclcpp's.
//!
//! ros2-client's own defaults differ from rclcpp's (best effort, KeepLast(1) for
//! subscriptions), so every endpoint here names one of these profiles explicitly.

use std::time::Duration;

use ros2_client::qos::{Durability, History, QosProfile, Reliability, WhenFull};

/// How long a reliable writer waits for room in a full history before the write fails.
const WHEN_FULL: WhenFull = WhenFull::Wait(Duration::from_millis(100));

/// rclcpp's default (`rmw_qos_profile_default`): reliable, volatile, KeepLast(10).
pub fn default_profile() -> QosProfile {
    QosProfile::publisher_default()
        .reliability(Reliability::Reliable { when_full: WHEN_FULL })
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: 10 })
}

/// rclcpp's `SensorDataQoS` (`rmw_qos_profile_sensor_data`): best effort, volatile, KeepLast(5).
pub fn sensor_data() -> QosProfile {
    QosProfile::subscription_default()
        .reliability(Reliability::BestEffort)
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: 5 })
}

/// `/clock` as rclcpp's clock subscription and publishers use it: best effort, KeepLast(1).
pub fn clock() -> QosProfile {
    sensor_data().history(History::KeepLast { depth: 1 })
}

/// `/tf`: rclcpp's default (tf2_ros uses KeepLast(100); readers with KeepLast(10) match).
pub fn tf() -> QosProfile {
    default_profile().history(History::KeepLast { depth: 100 })
}

/// rclcpp's services (`rmw_qos_profile_services_default`): reliable, volatile, KeepLast(10).
pub fn services() -> QosProfile {
    default_profile()
}

/// rcl_action's status topic (`rcl_action_qos_profile_status_default`): reliable,
/// transient local, KeepLast(1).
pub fn action_status() -> QosProfile {
    default_profile().durability(Durability::TransientLocal).history(History::KeepLast { depth: 1 })
}

/// The QoS of an action server as rcl_action sets it.
pub fn action_server() -> ros2_client::action::ActionServerQosPolicies {
    ros2_client::action::ActionServerQosPolicies {
        goal_service: services(),
        result_service: services(),
        cancel_service: services(),
        feedback_publisher: default_profile(),
        status_publisher: action_status(),
    }
}

/// The QoS of an action client as rcl_action sets it.
pub fn action_client() -> ros2_client::action::ActionClientQosPolicies {
    ros2_client::action::ActionClientQosPolicies {
        goal_service: services(),
        result_service: services(),
        cancel_service: services(),
        feedback_subscription: default_profile(),
        status_subscription: action_status(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_equal_rclcpps() {
        let d = default_profile();
        assert!(matches!(d.reliability, Reliability::Reliable { .. }));
        assert_eq!(d.durability, Durability::Volatile);
        assert_eq!(d.history, History::KeepLast { depth: 10 });
        let s = sensor_data();
        assert_eq!(s.reliability, Reliability::BestEffort);
        assert_eq!(s.durability, Durability::Volatile);
        assert_eq!(s.history, History::KeepLast { depth: 5 });
        let st = action_status();
        assert!(matches!(st.reliability, Reliability::Reliable { .. }));
        assert_eq!(st.durability, Durability::TransientLocal);
    }
}
