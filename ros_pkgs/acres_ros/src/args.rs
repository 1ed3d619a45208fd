//! `--ros-args` parsed as ROS 2's `rcl` does.
//!
//! Everything after `--ros-args` up to a lone `--` (or the end) is a ROS argument; several
//! `--ros-args` sections may appear. Understood:
//!
//! | argument | meaning |
//! | --- | --- |
//! | `-p name:=value`, `--param name:=value` | a parameter; the value is a YAML scalar or list (`true`, `3`, `2.5`, `[1, 2]`, `text`) |
//! | `-r __node:=name`, `-r __name:=name` | the node's name |
//! | `-r __ns:=/ns` | the node's namespace |
//! | `-r from:=to` | a topic remap (kept; applied by [`RosArgs::remap`]) |
//! | `--params-file file.yaml` | parameters of `/**` and of this node (`ros__parameters`; nested keys joined by `.`) |
//! | `--log-level level`, `--log-level name:=level` | the log level (`debug`, `info`, `warn`, `error`, `fatal`) |
//!
//! Order matters as in ROS: a later assignment of the same parameter wins, whether it comes from
//! `-p` or a parameters file. Arguments outside `--ros-args` sections are the program's own and
//! are returned untouched.
//!
//! ```
//! use acres_ros::args::{RosArgs, ParamValue};
//! let a = RosArgs::parse(["node", "--ros-args", "-p", "rate:=4.0", "-r", "__ns:=/robot"], "core").unwrap();
//! assert_eq!(a.param("rate"), Some(&ParamValue::Double(4.0)));
//! assert_eq!(a.namespace, "/robot");
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// A parameter value (the ROS parameter types acres uses).
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// `bool`.
    Bool(bool),
    /// `int64`.
    Integer(i64),
    /// `double`.
    Double(f64),
    /// `string`.
    String(String),
    /// An array (of any of the above).
    Array(Vec<ParamValue>),
}

impl ParamValue {
    /// Parses a command-line value as ROS does: a YAML scalar or list.
    pub fn parse(text: &str) -> ParamValue {
        match serde_yaml::from_str::<serde_yaml::Value>(text) {
            Ok(v) => ParamValue::from_yaml(&v).unwrap_or_else(|| ParamValue::String(text.to_string())),
            Err(_) => ParamValue::String(text.to_string()),
        }
    }

    fn from_yaml(v: &serde_yaml::Value) -> Option<ParamValue> {
        use serde_yaml::Value as Y;
        Some(match v {
            Y::Bool(b) => ParamValue::Bool(*b),
            Y::Number(n) if n.is_i64() => ParamValue::Integer(n.as_i64()?),
            Y::Number(n) => ParamValue::Double(n.as_f64()?),
            Y::String(s) => ParamValue::String(s.clone()),
            Y::Sequence(items) => {
                ParamValue::Array(items.iter().map(ParamValue::from_yaml).collect::<Option<_>>()?)
            }
            _ => return None,
        })
    }

    /// The value as a float (an integer converts).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ParamValue::Double(d) => Some(*d),
            ParamValue::Integer(i) => Some(*i as f64),
            _ => None,
        }
    }

    /// The value as a bool.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The value as text (strings only).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            ParamValue::String(s) => Some(s),
            _ => None,
        }
    }
}

/// A bad ROS argument.
#[derive(Debug, Error, PartialEq)]
pub enum ArgsError {
    /// A flag without its value.
    #[error("--ros-args: {flag} needs a value")]
    MissingValue {
        /// The flag.
        flag: String,
    },
    /// A `-p`/`-r` value that is not `name:=value`.
    #[error("--ros-args: {flag} {text:?} is not name:=value")]
    NotAssignment {
        /// The flag.
        flag: String,
        /// What was given.
        text: String,
    },
    /// An argument this parser does not know.
    #[error("--ros-args: unknown argument {0:?}")]
    Unknown(String),
    /// A parameters file that cannot be read.
    #[error("--params-file {file}: {reason}")]
    ParamsFile {
        /// The file.
        file: PathBuf,
        /// Why.
        reason: String,
    },
    /// A log level that is not one of ROS's.
    #[error("--log-level {0:?}: use debug, info, warn, error or fatal")]
    LogLevel(String),
    /// A parameter with the wrong type.
    #[error("parameter {name}: expected {expected}, got {got:?}")]
    ParamType {
        /// The parameter.
        name: String,
        /// The type wanted.
        expected: &'static str,
        /// The value given.
        got: ParamValue,
    },
}

/// The parsed ROS arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct RosArgs {
    /// The node's name (`-r __node:=`), or the default given to [`RosArgs::parse`].
    pub node_name: String,
    /// The node's namespace (`-r __ns:=`), `/` by default.
    pub namespace: String,
    /// Parameters, last assignment wins.
    pub params: BTreeMap<String, ParamValue>,
    /// Topic remaps, `from` → `to`.
    pub remaps: BTreeMap<String, String>,
    /// The log level, as `tracing` names it (`trace`..`error`).
    pub log_level: Option<String>,
    /// The program's own arguments (outside `--ros-args`), the program name first.
    pub rest: Vec<String>,
}

impl RosArgs {
    /// Parses a command line (the program name first) for a node whose default name is
    /// `default_node`.
    pub fn parse<I, S>(argv: I, default_node: &str) -> Result<RosArgs, ArgsError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut out = RosArgs {
            node_name: default_node.to_string(),
            namespace: "/".to_string(),
            params: BTreeMap::new(),
            remaps: BTreeMap::new(),
            log_level: None,
            rest: Vec::new(),
        };
        let mut files: Vec<(usize, PathBuf)> = Vec::new();
        let mut ordered: Vec<(usize, String, ParamValue)> = Vec::new();
        let mut it = argv.into_iter().map(Into::into).peekable();
        let mut in_ros = false;
        let mut order = 0usize;
        while let Some(a) = it.next() {
            if !in_ros {
                if a == "--ros-args" {
                    in_ros = true;
                } else {
                    out.rest.push(a);
                }
                continue;
            }
            let mut value = |flag: &str| it.next().ok_or(ArgsError::MissingValue { flag: flag.to_string() });
            order += 1;
            match a.as_str() {
                "--" => in_ros = false,
                "--ros-args" => {}
                "-p" | "--param" => {
                    let v = value(&a)?;
                    let (name, val) = split_assign(&a, &v)?;
                    ordered.push((order, name.to_string(), ParamValue::parse(val)));
                }
                "-r" | "--remap" => {
                    let v = value(&a)?;
                    let (from, to) = split_assign(&a, &v)?;
                    // `node:__ns:=` style (a rule for one node) applies when it names us.
                    let from = match from.split_once(':') {
                        Some((node, rule)) if node == out.node_name || node == default_node => rule,
                        Some(_) => continue,
                        None => from,
                    };
                    match from {
                        "__node" | "__name" => out.node_name = to.to_string(),
                        "__ns" => out.namespace = to.to_string(),
                        _ => {
                            out.remaps.insert(from.to_string(), to.to_string());
                        }
                    }
                }
                "--params-file" => files.push((order, PathBuf::from(value(&a)?))),
                "--log-level" => {
                    let v = value(&a)?;
                    let level = v.rsplit_once(":=").map_or(v.as_str(), |(_, l)| l);
                    out.log_level = Some(tracing_level(level)?.to_string());
                }
                "--enable-rosout-logs"
                | "--disable-rosout-logs"
                | "--enable-stdout-logs"
                | "--disable-stdout-logs"
                | "--enable-external-lib-logs"
                | "--disable-external-lib-logs" => {}
                "-e" | "--enclave" | "--log-config-file" => {
                    value(&a)?;
                }
                _ => return Err(ArgsError::Unknown(a)),
            }
        }
        for (order, file) in files {
            for (name, v) in params_file(&file, &out.node_name, &out.namespace)? {
                ordered.push((order, name, v));
            }
        }
        ordered.sort_by_key(|(o, _, _)| *o);
        for (_, name, v) in ordered {
            out.params.insert(name, v);
        }
        Ok(out)
    }

    /// The parameter `name`, if given.
    pub fn param(&self, name: &str) -> Option<&ParamValue> {
        self.params.get(name)
    }

    /// A float parameter, or `default`.
    pub fn f64_or(&self, name: &str, default: f64) -> Result<f64, ArgsError> {
        match self.param(name) {
            None => Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| type_error(name, "a number", v)),
        }
    }

    /// A bool parameter, or `default`.
    pub fn bool_or(&self, name: &str, default: bool) -> Result<bool, ArgsError> {
        match self.param(name) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| type_error(name, "true or false", v)),
        }
    }

    /// A string parameter, or `default`.
    pub fn str_or(&self, name: &str, default: &str) -> Result<String, ArgsError> {
        match self.param(name) {
            None => Ok(default.to_string()),
            Some(v) => v.as_str().map(str::to_string).ok_or_else(|| type_error(name, "a string", v)),
        }
    }

    /// The topic name after remapping.
    pub fn remap<'a>(&'a self, topic: &'a str) -> &'a str {
        self.remaps.get(topic).map_or(topic, String::as_str)
    }
}

fn type_error(name: &str, expected: &'static str, got: &ParamValue) -> ArgsError {
    ArgsError::ParamType { name: name.to_string(), expected, got: got.clone() }
}

fn split_assign<'a>(flag: &str, text: &'a str) -> Result<(&'a str, &'a str), ArgsError> {
    text.split_once(":=")
        .filter(|(n, _)| !n.is_empty())
        .ok_or_else(|| ArgsError::NotAssignment { flag: flag.to_string(), text: text.to_string() })
}

/// ROS's level names → `tracing`'s (`fatal` is `error`).
fn tracing_level(level: &str) -> Result<&'static str, ArgsError> {
    Ok(match level.to_ascii_lowercase().as_str() {
        "debug" => "debug",
        "info" => "info",
        "warn" => "warn",
        "error" | "fatal" => "error",
        _ => return Err(ArgsError::LogLevel(level.to_string())),
    })
}

/// The parameters a YAML parameters file gives this node: the sections `/**`, `node`,
/// `/ns/node` (and wildcards `/**/node`), each `ros__parameters`, in file order.
fn params_file(file: &Path, node: &str, ns: &str) -> Result<Vec<(String, ParamValue)>, ArgsError> {
    let err = |reason: String| ArgsError::ParamsFile { file: file.to_path_buf(), reason };
    let text = std::fs::read_to_string(file).map_err(|e| err(e.to_string()))?;
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).map_err(|e| err(e.to_string()))?;
    let map = doc.as_mapping().ok_or_else(|| err("the top level is not a mapping".into()))?;
    let full = format!("{}/{node}", ns.trim_end_matches('/'));
    let mut out = Vec::new();
    for (k, v) in map {
        let key = k.as_str().unwrap_or_default();
        let key_norm = if key.starts_with('/') { key.to_string() } else { format!("/{key}") };
        let ours = key == "/**"
            || key == "**"
            || key_norm == full
            || key == node
            || key_norm == format!("/**/{node}");
        if !ours {
            continue;
        }
        let Some(params) = v.get("ros__parameters") else {
            return Err(err(format!("section {key:?} has no ros__parameters")));
        };
        flatten("", params, &mut out).map_err(err)?;
    }
    Ok(out)
}

fn flatten(prefix: &str, v: &serde_yaml::Value, out: &mut Vec<(String, ParamValue)>) -> Result<(), String> {
    match v.as_mapping() {
        Some(m) => {
            for (k, v) in m {
                let k = k.as_str().ok_or("a parameter name is not text")?;
                let name = if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
                flatten(&name, v, out)?;
            }
            Ok(())
        }
        None => {
            let p =
                ParamValue::from_yaml(v).ok_or_else(|| format!("parameter {prefix}: unsupported value"))?;
            out.push((prefix.to_string(), p));
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests;
