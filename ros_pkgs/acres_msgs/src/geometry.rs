//! `geometry_msgs`, `nav_msgs` and `tf2_msgs`: poses, velocities, transforms and odometry.
//! Lengths are in m, angles in rad, velocities in m/s and rad/s (ROS REP 103).

/// `geometry_msgs`: points, vectors, orientations, poses, velocities and transforms.
pub mod geometry_msgs {
    use crate::builtin::std_msgs::Header;
    use crate::macros::message;

    message! {
        /// A vector in free space (a direction, not a place), in the unit of its use.
        #[derive(Default, Copy)]
        Vector3 = "geometry_msgs" / "msg" / "Vector3" {
            /// x.
            x: f64,
            /// y.
            y: f64,
            /// z.
            z: f64,
        }
    }

    message! {
        /// A point in free space, m. In JSON a coordinate that is not given (NaN, as an
        /// `acres_interfaces` field that does not apply) is `null`.
        #[derive(Default, Copy)]
        Point = "geometry_msgs" / "msg" / "Point" {
            /// x, m.
            #[serde(with = "crate::json_float")]
            x: f64,
            /// y, m.
            #[serde(with = "crate::json_float")]
            y: f64,
            /// z, m.
            #[serde(with = "crate::json_float")]
            z: f64,
        }
    }

    message! {
        /// An orientation as a unit quaternion (the default is the identity, `w` = 1, as in
        /// the `.msg` defaults).
        #[derive(Copy)]
        Quaternion = "geometry_msgs" / "msg" / "Quaternion" {
            /// x.
            x: f64,
            /// y.
            y: f64,
            /// z.
            z: f64,
            /// w.
            w: f64,
        }
    }

    impl Default for Quaternion {
        fn default() -> Self {
            Self { x: 0.0, y: 0.0, z: 0.0, w: 1.0 }
        }
    }

    impl Quaternion {
        /// The rotation by `yaw_rad` about z (counter-clockwise seen from above).
        pub fn from_yaw(yaw_rad: f64) -> Self {
            let (s, c) = (yaw_rad / 2.0).sin_cos();
            Self { x: 0.0, y: 0.0, z: s, w: c }
        }
        /// The rotation about z, rad, in `-π..=π`.
        pub fn yaw_rad(&self) -> f64 {
            (2.0 * (self.w * self.z + self.x * self.y)).atan2(1.0 - 2.0 * (self.y * self.y + self.z * self.z))
        }
    }

    message! {
        /// A position and an orientation.
        #[derive(Default, Copy)]
        Pose = "geometry_msgs" / "msg" / "Pose" {
            /// The position, m.
            position: Point,
            /// The orientation.
            orientation: Quaternion,
        }
    }

    message! {
        /// A velocity: linear (m/s) and angular (rad/s).
        #[derive(Default, Copy)]
        Twist = "geometry_msgs" / "msg" / "Twist" {
            /// Linear velocity, m/s.
            linear: Vector3,
            /// Angular velocity, rad/s.
            angular: Vector3,
        }
    }

    message! {
        /// A pose with its uncertainty.
        #[derive(Copy)]
        PoseWithCovariance = "geometry_msgs" / "msg" / "PoseWithCovariance" {
            /// The pose.
            pose: Pose,
            /// Row-major 6×6 covariance of (x, y, z, roll, pitch, yaw), m² and rad².
            #[serde(with = "crate::serde_array")]
            covariance: [f64; 36],
        }
    }

    message! {
        /// A velocity with its uncertainty.
        #[derive(Copy)]
        TwistWithCovariance = "geometry_msgs" / "msg" / "TwistWithCovariance" {
            /// The velocity.
            twist: Twist,
            /// Row-major 6×6 covariance of (vx, vy, vz, wx, wy, wz), (m/s)² and (rad/s)².
            #[serde(with = "crate::serde_array")]
            covariance: [f64; 36],
        }
    }

    impl Default for PoseWithCovariance {
        fn default() -> Self {
            Self { pose: Pose::default(), covariance: [0.0; 36] }
        }
    }

    impl Default for TwistWithCovariance {
        fn default() -> Self {
            Self { twist: Twist::default(), covariance: [0.0; 36] }
        }
    }

    message! {
        /// A transform between two frames.
        #[derive(Default, Copy)]
        Transform = "geometry_msgs" / "msg" / "Transform" {
            /// Translation, m.
            translation: Vector3,
            /// Rotation.
            rotation: Quaternion,
        }
    }

    message! {
        /// The transform from `header.frame_id` to `child_frame_id` at `header.stamp`.
        #[derive(Default)]
        TransformStamped = "geometry_msgs" / "msg" / "TransformStamped" {
            /// The parent frame and the time.
            header: Header,
            /// The child frame.
            child_frame_id: String,
            /// The child frame's pose in the parent frame.
            transform: Transform,
        }
    }
}

/// `nav_msgs`: odometry.
pub mod nav_msgs {
    use super::geometry_msgs::{PoseWithCovariance, TwistWithCovariance};
    use crate::builtin::std_msgs::Header;
    use crate::macros::message;

    message! {
        /// An estimate of pose and velocity, on `/odom`.
        #[derive(Default)]
        Odometry = "nav_msgs" / "msg" / "Odometry" {
            /// The pose's frame (`odom`) and the time.
            header: Header,
            /// The frame of the velocity (`base_link`).
            child_frame_id: String,
            /// The pose in `header.frame_id`.
            pose: PoseWithCovariance,
            /// The velocity in `child_frame_id`.
            twist: TwistWithCovariance,
        }
    }
}

/// `tf2_msgs`: the transform tree.
pub mod tf2_msgs {
    use super::geometry_msgs::TransformStamped;
    use crate::macros::message;

    message! {
        /// Transforms, on `/tf` and `/tf_static`.
        #[derive(Default)]
        TFMessage = "tf2_msgs" / "msg" / "TFMessage" {
            /// The transforms.
            transforms: Vec<TransformStamped>,
        }
    }
}
