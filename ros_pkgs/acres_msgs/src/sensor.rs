//! `sensor_msgs` and `visualization_msgs`: point clouds, laser scans and markers.

/// `sensor_msgs`: the LiDAR sweep (`PointCloud2`) and the scan (`LaserScan`).
pub mod sensor_msgs {
    use crate::builtin::std_msgs::Header;
    use crate::macros::message;

    message! {
        /// One channel of a point in a `PointCloud2`.
        #[derive(Default)]
        PointField = "sensor_msgs" / "msg" / "PointField" {
            /// The channel's name (`x`, `y`, `z`, `intensity`).
            name: String,
            /// Where the channel starts in a point, bytes.
            offset: u32,
            /// The channel's type (`PointField::FLOAT32`, ...).
            datatype: u8,
            /// How many values the channel has.
            count: u32,
        }
    }

    impl PointField {
        /// `int8`.
        pub const INT8: u8 = 1;
        /// `uint8`.
        pub const UINT8: u8 = 2;
        /// `int16`.
        pub const INT16: u8 = 3;
        /// `uint16`.
        pub const UINT16: u8 = 4;
        /// `int32`.
        pub const INT32: u8 = 5;
        /// `uint32`.
        pub const UINT32: u8 = 6;
        /// `float32`.
        pub const FLOAT32: u8 = 7;
        /// `float64`.
        pub const FLOAT64: u8 = 8;
    }

    message! {
        /// Points as a binary blob whose layout `fields` describes (the LiDAR sweep on
        /// `/lidar/points`).
        #[derive(Default)]
        PointCloud2 = "sensor_msgs" / "msg" / "PointCloud2" {
            /// The time of the sweep and the sensor's frame.
            header: Header,
            /// Rows (1 for an unordered cloud).
            height: u32,
            /// Points per row.
            width: u32,
            /// The channels of a point.
            fields: Vec<PointField>,
            /// True when `data` is big-endian.
            is_bigendian: bool,
            /// One point's length, bytes.
            point_step: u32,
            /// One row's length, bytes.
            row_step: u32,
            /// The points, `row_step * height` bytes.
            data: Vec<u8>,
            /// True when no point is invalid.
            is_dense: bool,
        }
    }

    message! {
        /// A planar scan of ranges (the scan function's 360 ranges on `/scan`).
        #[derive(Default)]
        LaserScan = "sensor_msgs" / "msg" / "LaserScan" {
            /// The time of the first ray and the sensor's frame.
            header: Header,
            /// The first ray's angle, rad, counter-clockwise from x.
            #[serde(with = "crate::json_float")]
            angle_min: f32,
            /// The last ray's angle, rad.
            #[serde(with = "crate::json_float")]
            angle_max: f32,
            /// The angle between rays, rad.
            #[serde(with = "crate::json_float")]
            angle_increment: f32,
            /// The time between rays, s.
            #[serde(with = "crate::json_float")]
            time_increment: f32,
            /// The time between scans, s.
            #[serde(with = "crate::json_float")]
            scan_time: f32,
            /// The shortest valid range, m.
            #[serde(with = "crate::json_float")]
            range_min: f32,
            /// The longest valid range, m.
            #[serde(with = "crate::json_float")]
            range_max: f32,
            /// The ranges, m (+inf: no return).
            #[serde(with = "crate::json_float::vec")]
            ranges: Vec<f32>,
            /// Intensities in the device's unit; empty when none.
            #[serde(with = "crate::json_float::vec")]
            intensities: Vec<f32>,
        }
    }
}

/// `visualization_msgs`: markers (the map and the objects in recordings).
///
/// `Marker` is Humble's: the texture and mesh-file fields that Iron added are not part of it.
pub mod visualization_msgs {
    use crate::builtin::builtin_interfaces::Duration;
    use crate::builtin::std_msgs::{ColorRGBA, Header};
    use crate::geometry::geometry_msgs::{Point, Pose, Vector3};
    use crate::macros::message;

    message! {
        /// A shape to draw.
        #[derive(Default)]
        Marker = "visualization_msgs" / "msg" / "Marker" {
            /// The frame and the time.
            header: Header,
            /// The namespace; with `id` it names the marker.
            ns: String,
            /// The marker's number in its namespace.
            id: i32,
            /// The shape (`Marker::CUBE`, ...).
            r#type: i32,
            /// What to do (`Marker::ADD`, `Marker::DELETE`, `Marker::DELETEALL`).
            action: i32,
            /// The pose in the header's frame, m.
            pose: Pose,
            /// The size, m (1, 1, 1: the default).
            scale: Vector3,
            /// The colour.
            color: ColorRGBA,
            /// How long the marker lasts (0: for ever).
            lifetime: Duration,
            /// True to re-transform the marker into its frame each time step.
            frame_locked: bool,
            /// Points of line strips, lists and point markers, m.
            points: Vec<Point>,
            /// One colour per point, or none.
            colors: Vec<ColorRGBA>,
            /// The text of text markers.
            text: String,
            /// The mesh of mesh markers (a resource URI).
            mesh_resource: String,
            /// True to use the mesh's own materials.
            mesh_use_embedded_materials: bool,
        }
    }

    impl Marker {
        /// An arrow.
        pub const ARROW: i32 = 0;
        /// A box.
        pub const CUBE: i32 = 1;
        /// A sphere.
        pub const SPHERE: i32 = 2;
        /// A cylinder.
        pub const CYLINDER: i32 = 3;
        /// Connected line segments through `points`.
        pub const LINE_STRIP: i32 = 4;
        /// Line segments between pairs of `points`.
        pub const LINE_LIST: i32 = 5;
        /// A box at each point.
        pub const CUBE_LIST: i32 = 6;
        /// A sphere at each point.
        pub const SPHERE_LIST: i32 = 7;
        /// A square at each point.
        pub const POINTS: i32 = 8;
        /// Text facing the viewer.
        pub const TEXT_VIEW_FACING: i32 = 9;
        /// A mesh.
        pub const MESH_RESOURCE: i32 = 10;
        /// Triangles from triples of `points`.
        pub const TRIANGLE_LIST: i32 = 11;
        /// Add or change the marker.
        pub const ADD: i32 = 0;
        /// Same as `ADD`.
        pub const MODIFY: i32 = 0;
        /// Remove the marker.
        pub const DELETE: i32 = 2;
        /// Remove every marker (of the namespace, when given).
        pub const DELETEALL: i32 = 3;
    }

    message! {
        /// Markers, drawn together.
        #[derive(Default)]
        MarkerArray = "visualization_msgs" / "msg" / "MarkerArray" {
            /// The markers.
            markers: Vec<Marker>,
        }
    }
}
