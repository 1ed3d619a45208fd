//! `--ros-args` as `rcl` parses them.

use super::*;

fn parse(args: &[&str]) -> Result<RosArgs, ArgsError> {
    let mut argv = vec!["prog"];
    argv.extend_from_slice(args);
    RosArgs::parse(argv, "default_node")
}

#[test]
fn parameters_take_yaml_scalars() {
    let a = parse(&[
        "--ros-args",
        "-p",
        "b:=true",
        "-p",
        "i:=3",
        "-p",
        "d:=2.5",
        "-p",
        "s:=hello",
        "-p",
        "l:=[1, 2]",
    ])
    .unwrap();
    assert_eq!(a.param("b"), Some(&ParamValue::Bool(true)));
    assert_eq!(a.param("i"), Some(&ParamValue::Integer(3)));
    assert_eq!(a.param("d"), Some(&ParamValue::Double(2.5)));
    assert_eq!(a.param("s"), Some(&ParamValue::String("hello".into())));
    assert_eq!(a.param("l"), Some(&ParamValue::Array(vec![ParamValue::Integer(1), ParamValue::Integer(2)])));
    // An integer reads as a float where a float is wanted, not the other way round.
    assert_eq!(a.f64_or("i", 0.0), Ok(3.0));
    assert!(a.bool_or("i", false).is_err());
}

#[test]
fn node_name_and_namespace_remaps() {
    let a =
        parse(&["--ros-args", "-r", "__node:=core", "--remap", "__ns:=/robot1", "-r", "/cmd_vel:=/x/cmd"])
            .unwrap();
    assert_eq!(a.node_name, "core");
    assert_eq!(a.namespace, "/robot1");
    assert_eq!(a.remap("/cmd_vel"), "/x/cmd");
    assert_eq!(a.remap("/odom"), "/odom");
    // A rule for another node does not apply.
    let b = parse(&["--ros-args", "-r", "other:__node:=x", "-r", "default_node:__ns:=/y"]).unwrap();
    assert_eq!(b.node_name, "default_node");
    assert_eq!(b.namespace, "/y");
}

#[test]
fn program_arguments_stay_outside_ros_sections() {
    let a = parse(&["--mine", "--ros-args", "-p", "a:=1", "--", "tail", "--ros-args", "-p", "b:=2"]).unwrap();
    assert_eq!(a.rest, ["prog", "--mine", "tail"]);
    assert_eq!(a.params.len(), 2);
}

#[test]
fn later_assignments_win_across_files_and_flags() {
    let dir = std::env::temp_dir().join(format!("acres_ros_args_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("p.yaml");
    std::fs::write(
        &f,
        "/**:\n  ros__parameters:\n    rate: 2.0\n    nested:\n      x: 1\ncore:\n  ros__parameters:\n    skills: false\nother:\n  ros__parameters:\n    rate: 9.0\n",
    )
    .unwrap();
    let fs = f.to_str().unwrap();
    let a = RosArgs::parse(
        ["p", "--ros-args", "-p", "rate:=1.0", "--params-file", fs, "-r", "__node:=core"],
        "n",
    )
    .unwrap();
    assert_eq!(a.param("rate"), Some(&ParamValue::Double(2.0)), "the file comes after -p");
    assert_eq!(a.param("nested.x"), Some(&ParamValue::Integer(1)));
    assert_eq!(a.param("skills"), Some(&ParamValue::Bool(false)));
    let b = RosArgs::parse(["p", "--ros-args", "--params-file", fs, "-p", "rate:=1.0"], "core").unwrap();
    assert_eq!(b.param("rate"), Some(&ParamValue::Double(1.0)), "-p comes after the file");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn log_levels_as_ros_names_them() {
    assert_eq!(parse(&["--ros-args", "--log-level", "DEBUG"]).unwrap().log_level.as_deref(), Some("debug"));
    assert_eq!(
        parse(&["--ros-args", "--log-level", "core:=fatal"]).unwrap().log_level.as_deref(),
        Some("error")
    );
    assert_eq!(parse(&["--ros-args", "--log-level", "loud"]), Err(ArgsError::LogLevel("loud".into())));
}

#[test]
fn bad_arguments_are_named() {
    assert_eq!(parse(&["--ros-args", "-p"]), Err(ArgsError::MissingValue { flag: "-p".into() }));
    assert_eq!(
        parse(&["--ros-args", "-p", "rate=1"]),
        Err(ArgsError::NotAssignment { flag: "-p".into(), text: "rate=1".into() })
    );
    assert_eq!(parse(&["--ros-args", "--frobnicate"]), Err(ArgsError::Unknown("--frobnicate".into())));
    assert!(matches!(
        parse(&["--ros-args", "--params-file", "/nonexistent/p.yaml"]),
        Err(ArgsError::ParamsFile { .. })
    ));
}
