//! `ros2msg` schema text: a message's `.msg` text with the text of every message it depends
//! on, in the form rosbag2 writes into MCAP files (and Foxglove and `ros2 bag` read).
//!
//! The form (rosbag2's `LocalMessageDefinitionSource::get_full_text`): the root's `.msg` text;
//! then, depth first, for each dependency not written yet, in the sorted order of its name
//! (`pkg/Type`): a newline, a line of 80 `=`, a line `MSG: pkg/Type`, and that dependency's text
//! followed by its own dependencies. The dependencies of a text are the non-primitive types that
//! open a line (`Type name`, `pkg/Type[] name`); a type without a package is in the package of
//! the text.
//!
//! The texts of standard messages are those of ROS 2 (Humble/Jazzy); those of
//! `acres_interfaces` are copies of that package's files (a test keeps them equal).

use std::collections::BTreeSet;

use thiserror::Error;

/// One message definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schema {
    /// The name as dependencies name it: `pkg/Type` (`std_msgs/Header`).
    pub name: &'static str,
    /// The `.msg` text, comments included.
    pub text: &'static str,
}

/// A dependency that is not among the known schemas.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{parent} depends on {name}, which is not a known message")]
pub struct UnknownType {
    /// The message whose text names the type.
    pub parent: String,
    /// The type named.
    pub name: String,
}

/// The delimiter line before each dependency (80 `=`).
pub const DELIMITER: &str =
    "================================================================================";

/// The primitive types of `.msg` files: not dependencies.
const PRIMITIVES: [&str; 14] = [
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
    "int64", "uint64", "string",
];

impl Schema {
    /// The package of the message (`std_msgs`).
    pub fn package(&self) -> &'static str {
        self.name.split('/').next().unwrap_or(self.name)
    }

    /// The message's direct dependencies as `pkg/Type`, sorted, each once.
    pub fn dependencies(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for line in self.text.lines() {
            let line = line.trim_start();
            let end = line
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '/'))
                .unwrap_or(line.len());
            let (ty, rest) = line.split_at(end);
            // An optional array suffix, then at least one whitespace character.
            let rest = match rest.strip_prefix('[') {
                Some(r) => r.find(']').map_or("", |i| &r[i + 1..]),
                None => rest,
            };
            if ty.is_empty() || !rest.starts_with(|c: char| c.is_whitespace()) || PRIMITIVES.contains(&ty) {
                continue;
            }
            out.insert(if ty.contains('/') { ty.to_string() } else { format!("{}/{ty}", self.package()) });
        }
        out
    }

    /// The full schema text with every dependency, as rosbag2 writes it; `lookup` finds a
    /// dependency by `pkg/Type`.
    pub fn full_text(&self, lookup: impl Fn(&str) -> Option<&'static Schema>) -> Result<String, UnknownType> {
        let mut seen = BTreeSet::new();
        let mut out = String::new();
        append(self, &lookup, &mut seen, &mut out)?;
        Ok(out)
    }
}

fn append(
    schema: &Schema,
    lookup: &impl Fn(&str) -> Option<&'static Schema>,
    seen: &mut BTreeSet<String>,
    out: &mut String,
) -> Result<(), UnknownType> {
    out.push_str(schema.text);
    for dep in schema.dependencies() {
        if seen.insert(dep.clone()) {
            let found =
                lookup(&dep).ok_or_else(|| UnknownType { parent: schema.name.into(), name: dep.clone() })?;
            out.push('\n');
            out.push_str(DELIMITER);
            out.push_str("\nMSG: ");
            out.push_str(&dep);
            out.push('\n');
            append(found, lookup, seen, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_skip_primitives_comments_and_constants_and_qualify_local_types() {
        let s = Schema {
            name: "a_msgs/X",
            text: "# Header h\nuint8 K=1\nstd_msgs/Header header\n  Point[] points # comment\nfloat64[36] c\nY[4] y\nstring<=5 s\n",
        };
        let deps: Vec<String> = s.dependencies().into_iter().collect();
        assert_eq!(deps, ["a_msgs/Point", "a_msgs/Y", "std_msgs/Header"]);
    }
}
