//! The `ros2msg` schema texts: every dependency exactly once and after a section that names it,
//! rosbag2's depth-first order, field lists equal to the `.msg` texts, names of the right form,
//! and the copies of `acres_interfaces` equal to that package's files.

use std::collections::BTreeSet;

use acres_msgs::geometry_msgs::Quaternion;
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::schema::{Schema, DELIMITER};
use acres_msgs::sensor_msgs::PointCloud2;
use acres_msgs::tf2_msgs::TFMessage;
use acres_msgs::visualization_msgs::MarkerArray;
use acres_msgs::{find_schema, for_each_message, Message, SCHEMAS};

/// The sections of a full text: (name, text); the root's name is "".
fn sections(full: &str) -> Vec<(String, String)> {
    let mut out = vec![(String::new(), String::new())];
    let mut lines = full.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line.trim_end() == DELIMITER {
            let head = lines.next().expect("a MSG: line after the delimiter");
            let name = head.strip_prefix("MSG: ").expect("MSG: line").trim_end().to_string();
            // The newline before the delimiter belongs to the format, not to the section.
            let prev = &mut out.last_mut().expect("a section").1;
            assert!(prev.ends_with("\n\n"), "a blank line before each delimiter");
            prev.pop();
            out.push((name, String::new()));
        } else {
            out.last_mut().expect("a section").1.push_str(line);
        }
    }
    out
}

/// Every dependency of `root`, transitively.
fn closure(root: &Schema) -> BTreeSet<String> {
    let mut todo: Vec<String> = root.dependencies().into_iter().collect();
    let mut seen = BTreeSet::new();
    while let Some(name) = todo.pop() {
        if seen.insert(name.clone()) {
            todo.extend(find_schema(&name).expect("known").dependencies());
        }
    }
    seen
}

fn check_full_text<T: Message>() {
    let full = T::schema_text();
    let secs = sections(&full);
    assert_eq!(secs[0].1, T::SCHEMA.text, "{}: the root's text comes first", T::ROS_NAME);
    let names: Vec<&str> = secs[1..].iter().map(|(n, _)| n.as_str()).collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "{}: a dependency written twice: {names:?}", T::ROS_NAME);
    let expected = closure(T::SCHEMA);
    assert_eq!(unique.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>(), expected, "{}", T::ROS_NAME);
    for (i, (name, text)) in secs.iter().enumerate().skip(1) {
        assert_eq!(text, find_schema(name).expect("known").text, "{name}: its own text");
        let named_before = secs[..i].iter().any(|(n, _)| {
            let s = if n.is_empty() { T::SCHEMA } else { find_schema(n).expect("known") };
            s.dependencies().contains(name)
        });
        assert!(named_before, "{}: {name} comes before any section that names it", T::ROS_NAME);
    }
}

#[test]
fn odometry_point_cloud_and_tf_name_each_dependency_once_in_a_valid_order() {
    check_full_text::<Odometry>();
    check_full_text::<PointCloud2>();
    check_full_text::<TFMessage>();
    check_full_text::<MarkerArray>();
}

macro_rules! check_all {
    ($($t:ty),*) => { $( check_full_text::<$t>(); )* };
}

#[test]
fn every_message_has_a_complete_schema_text() {
    for_each_message!(check_all);
}

#[test]
fn odometry_follows_rosbag2_depth_first_sorted_order() {
    let full = Odometry::schema_text();
    let names: Vec<String> = sections(&full)[1..].iter().map(|(n, _)| n.clone()).collect();
    // Sorted direct dependencies, each followed at once by its own not yet written ones.
    assert_eq!(
        names,
        [
            "geometry_msgs/PoseWithCovariance",
            "geometry_msgs/Pose",
            "geometry_msgs/Point",
            "geometry_msgs/Quaternion",
            "geometry_msgs/TwistWithCovariance",
            "geometry_msgs/Twist",
            "geometry_msgs/Vector3",
            "std_msgs/Header",
            "builtin_interfaces/Time",
        ]
    );
    assert!(full.contains("\nuint32 nanosec\n") && full.starts_with("# This represents an estimate"));
}

/// The field names of a `.msg` text: lines `type name` that are not constants.
fn msg_fields(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && !l.contains('='))
        .map(|l| l.split_whitespace().nth(1).expect("a field name").to_string())
        .collect()
}

fn check_fields<T: Message>() {
    let ours: Vec<&str> = T::FIELDS.iter().map(|f| f.trim_start_matches("r#")).collect();
    assert_eq!(ours, msg_fields(T::SCHEMA.text), "{}: fields in .msg order", T::ROS_NAME);
    let (pkg, rest) = T::ROS_NAME.split_once('/').expect("pkg/kind/Type");
    let (kind, ty) = rest.split_once('/').expect("kind/Type");
    assert_eq!(T::DDS_NAME, format!("{pkg}::{kind}::dds_::{ty}_"));
    assert_eq!(T::SCHEMA.name, format!("{pkg}/{ty}"));
}

macro_rules! check_all_fields {
    ($($t:ty),*) => { $( check_fields::<$t>(); )* };
}

#[test]
fn struct_fields_follow_the_msg_texts_and_names_have_the_ros_forms() {
    for_each_message!(check_all_fields);
    assert_eq!(Quaternion::ROS_NAME, "geometry_msgs/msg/Quaternion");
    assert_eq!(Quaternion::DDS_NAME, "geometry_msgs::msg::dds_::Quaternion_");
    let names: BTreeSet<&str> = SCHEMAS.iter().map(|s| s.name).collect();
    assert_eq!(names.len(), SCHEMAS.len(), "each schema once");
}

#[test]
fn acres_interfaces_copies_equal_the_interface_package() {
    let here = concat!(env!("CARGO_MANIFEST_DIR"), "/msg/acres_interfaces");
    let pkg = concat!(env!("CARGO_MANIFEST_DIR"), "/../acres_interfaces");
    // In the repository the interface package is always beside this one: a missing one fails.
    assert!(
        std::path::Path::new(pkg).exists(),
        "{pkg}: the acres_interfaces package is not beside acres_msgs"
    );
    let read = |p: String| std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
    let mut msgs = 0;
    for entry in std::fs::read_dir(format!("{pkg}/msg")).expect("msg folder") {
        let name = entry.expect("entry").file_name().into_string().expect("utf-8 name");
        assert_eq!(read(format!("{here}/{name}")), read(format!("{pkg}/msg/{name}")), "{name}");
        assert!(
            find_schema(&format!("acres_interfaces/{}", name.trim_end_matches(".msg"))).is_some(),
            "{name}"
        );
        msgs += 1;
    }
    assert_eq!(msgs, 10);
    let parts: Vec<String> =
        ["Goal", "Result", "Feedback"].iter().map(|p| read(format!("{here}/Skill_{p}.msg"))).collect();
    assert_eq!(parts.join("---\n"), read(format!("{pkg}/action/Skill.action")));
}
