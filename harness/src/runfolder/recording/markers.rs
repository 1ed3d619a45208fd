//! The map and the objects as `visualization_msgs/MarkerArray`, in the `map` frame.
//!
//! Map (`/acres/map`, once at t = 0, latched): namespace `lanes` (one `LINE_LIST` of every lane,
//! grey), `fields` (a `LINE_STRIP` around each field, green, id by field order), `field_labels`
//! (the field ids as text), `scout_loops` (each field's Scout loop, dark green), `home` (a
//! cylinder of the home radius). Objects (`/acres/objects`): a `DELETEALL` first, then one
//! `CUBE` per object (namespace `objects`, id = the object's id, its box and height, coloured by
//! kind) with its kind as text (namespace `object_labels`).

use acres_core::objects::{Object, ObjectKind};
use acres_farm::geom::{Pose as MapPose, Vec2};
use acres_farm::Map;
use acres_msgs::builtin_interfaces::Duration;
use acres_msgs::geometry_msgs::{Point, Pose, Quaternion, Vector3};
use acres_msgs::std_msgs::ColorRGBA;
use acres_msgs::visualization_msgs::{Marker, MarkerArray};

use super::convert::{header, pose, MAP_FRAME};

const fn rgba(r: f32, g: f32, b: f32, a: f32) -> ColorRGBA {
    ColorRGBA { r, g, b, a }
}

fn marker(t_s: f64, ns: &str, id: i32, kind: i32) -> Marker {
    Marker {
        header: header(t_s, MAP_FRAME),
        ns: ns.into(),
        id,
        r#type: kind,
        action: Marker::ADD,
        pose: Pose::default(),
        scale: Vector3 { x: 1.0, y: 1.0, z: 1.0 },
        color: rgba(1.0, 1.0, 1.0, 1.0),
        lifetime: Duration::default(),
        frame_locked: false,
        points: Vec::new(),
        colors: Vec::new(),
        text: String::new(),
        mesh_resource: String::new(),
        mesh_use_embedded_materials: false,
    }
}

fn point(p: Vec2) -> Point {
    Point { x: p.x, y: p.y, z: 0.0 }
}

fn strip(t_s: f64, ns: &str, id: i32, ring: &[Vec2], width_m: f64, color: ColorRGBA) -> Marker {
    let mut m = marker(t_s, ns, id, Marker::LINE_STRIP);
    m.points = ring.iter().copied().map(point).collect();
    if let Some(first) = ring.first() {
        m.points.push(point(*first));
    }
    m.scale = Vector3 { x: width_m, y: 0.0, z: 0.0 };
    m.color = color;
    m
}

fn label(t_s: f64, ns: &str, id: i32, at: Vec2, z_m: f64, text: &str) -> Marker {
    let mut m = marker(t_s, ns, id, Marker::TEXT_VIEW_FACING);
    m.pose.position = Point { x: at.x, y: at.y, z: z_m };
    m.scale = Vector3 { x: 0.0, y: 0.0, z: 4.0 };
    m.text = text.into();
    m
}

/// The farm map.
pub fn map_markers(map: &Map) -> MarkerArray {
    let mut markers = Vec::new();
    let mut lanes = marker(0.0, "lanes", 0, Marker::LINE_LIST);
    for lane in &map.lanes {
        if let (Some(a), Some(b)) = (map.nodes.get(&lane.from), map.nodes.get(&lane.to)) {
            lanes.points.push(point(*a));
            lanes.points.push(point(*b));
        }
    }
    lanes.scale = Vector3 { x: map.lane_width_m, y: 0.0, z: 0.0 };
    lanes.color = rgba(0.55, 0.5, 0.45, 0.8);
    markers.push(lanes);
    for (i, f) in map.fields.values().enumerate() {
        let id = i32::try_from(i).unwrap_or(i32::MAX);
        markers.push(strip(0.0, "fields", id, &f.polygon, 0.5, rgba(0.3, 0.75, 0.3, 1.0)));
        markers.push(strip(0.0, "scout_loops", id, &f.scout_loop, 0.3, rgba(0.1, 0.45, 0.1, 0.8)));
        let n = f.polygon.len().max(1) as f64;
        let c = f.polygon.iter().fold(Vec2::new(0.0, 0.0), |a, p| Vec2::new(a.x + p.x / n, a.y + p.y / n));
        markers.push(label(0.0, "field_labels", id, c, 1.0, &f.id));
    }
    let mut home = marker(0.0, "home", 0, Marker::CYLINDER);
    home.pose = pose(MapPose { x: map.home().x, y: map.home().y, yaw: 0.0 }, 0.05);
    home.scale = Vector3 { x: 2.0 * map.home_radius_m, y: 2.0 * map.home_radius_m, z: 0.1 };
    home.color = rgba(0.2, 0.4, 0.9, 0.5);
    markers.push(home);
    MarkerArray { markers }
}

fn kind_color(kind: ObjectKind) -> ColorRGBA {
    match kind {
        ObjectKind::Truck => rgba(0.85, 0.2, 0.15, 1.0),
        ObjectKind::Person => rgba(1.0, 0.6, 0.0, 1.0),
        ObjectKind::Tractor => rgba(0.2, 0.6, 0.2, 1.0),
        ObjectKind::Car => rgba(0.3, 0.3, 0.85, 1.0),
    }
}

/// The objects of the world at `t_s` (simulator truth: a recording, never a planner input).
pub fn object_markers(t_s: f64, objects: &[(u32, ObjectKind, MapPose)]) -> MarkerArray {
    let mut clear = marker(t_s, "", 0, Marker::CUBE);
    clear.action = Marker::DELETEALL;
    let mut markers = vec![clear];
    for (id, kind, p) in objects {
        let body = Object { id: *id, kind: *kind, pose: *p }.body();
        let mid = i32::try_from(*id).unwrap_or(i32::MAX);
        let mut m = marker(t_s, "objects", mid, Marker::CUBE);
        m.pose = Pose {
            position: Point { x: p.x, y: p.y, z: body.height_m / 2.0 },
            orientation: Quaternion::from_yaw(p.yaw),
        };
        m.scale =
            Vector3 { x: 2.0 * body.obb.half_length_m, y: 2.0 * body.obb.half_width_m, z: body.height_m };
        m.color = kind_color(*kind);
        markers.push(m);
        markers.push(label(t_s, "object_labels", mid, p.pos(), body.height_m + 1.0, kind.as_str()));
    }
    MarkerArray { markers }
}
