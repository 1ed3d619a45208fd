//! [`ScenarioError`]: one line, `<file>: at <json path>: <message>`, and the rewording of serde's
//! messages into the words of the scenario format.

use std::path::PathBuf;

/// A scenario that could not be loaded. The display is always one line,
/// `<file>: at <json path>: <message>`, where the JSON path is like `events[2].object.kind`
/// and `$` is the root.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file (or folder) could not be read.
    #[error("{}: at $: cannot read the {what}: {source}", file.display())]
    Io {
        /// The file or folder.
        file: PathBuf,
        /// `file` or `folder`.
        what: &'static str,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a valid scenario.
    #[error("{}: at {path}: {message}", file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The JSON path of the fault, e.g. `events[2].object.kind`; `$` is the root.
        path: String,
        /// What is wrong (one line).
        message: String,
    },
    /// Two files of one load have the same scenario id.
    #[error("{}: at id: scenario id \"{id}\" is already the id of {}", file.display(), first.display())]
    DuplicateId {
        /// The later file.
        file: PathBuf,
        /// The id.
        id: String,
        /// The earlier file with the same id.
        first: PathBuf,
    },
    /// A folder given as input holds no scenario file.
    #[error("{}: at $: the folder holds no scenario files (*.json)", dir.display())]
    EmptyFolder {
        /// The folder.
        dir: PathBuf,
    },
}

impl ScenarioError {
    /// The file (or folder) the error is about.
    pub fn file(&self) -> &std::path::Path {
        match self {
            ScenarioError::Io { file, .. }
            | ScenarioError::Invalid { file, .. }
            | ScenarioError::DuplicateId { file, .. } => file,
            ScenarioError::EmptyFolder { dir } => dir,
        }
    }
}

/// The JSON path of a serde_path_to_error path: `$` for the root.
pub(crate) fn json_path(p: &serde_path_to_error::Path) -> String {
    let s = p.to_string();
    if s == "." || s == "?" || s.is_empty() {
        "$".into()
    } else {
        s
    }
}

/// Rewords a serde_json data error in the words of the format: serde's "field" is our "key",
/// Rust type names become JSON ones, and the position suffix goes (the JSON path says where).
pub(crate) fn tidy(err: &serde_json::Error) -> String {
    let raw = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let msg = raw.strip_suffix(&suffix).unwrap_or(&raw);
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some((key, expected)) = rest.split_once("`, ") {
            return format!("unknown key \"{key}\"; {}", allowed_keys(expected));
        }
    }
    for (serde_word, ours) in [("missing field `", "missing key"), ("duplicate field `", "duplicate key")] {
        if let Some(key) = msg.strip_prefix(serde_word).and_then(|r| r.strip_suffix('`')) {
            return format!("{ours} \"{key}\"");
        }
    }
    if let Some((head, expected)) = msg.split_once(", expected ") {
        let head = head.replace("invalid type: map", "invalid type: object");
        let head = head.replace("invalid type: sequence", "invalid type: array");
        return format!("{head}, expected {}", json_type(expected));
    }
    if let Some(n) = msg.strip_prefix("invalid length ") {
        // A struct read from an array: serde_json allows it, the format does not.
        if let Some((_, expected)) = n.split_once(", expected ") {
            return format!("invalid type: array, expected {}", json_type(expected));
        }
    }
    msg.to_string()
}

/// serde's list of expected fields as ours: `expected one of a, b, c`.
fn allowed_keys(expected: &str) -> String {
    if expected == "there are no fields" {
        return "no keys are allowed here".into();
    }
    let list = expected.strip_prefix("expected one of ").or_else(|| expected.strip_prefix("expected "));
    let Some(list) = list else { return expected.to_string() };
    let keys: Vec<&str> = list
        .split(", ")
        .flat_map(|p| p.split(" or "))
        .map(|k| k.trim_matches('`'))
        .filter(|k| !k.is_empty())
        .collect();
    if keys.len() == 1 {
        format!("expected {}", keys[0])
    } else {
        format!("expected one of {}", keys.join(", "))
    }
}

/// A Rust type name in serde's "expected ..." as a JSON type.
fn json_type(expected: &str) -> String {
    match expected {
        "f64" | "f32" => "a number".into(),
        "u8" | "u16" | "u32" | "u64" | "usize" => "an integer of 0 or more".into(),
        "a sequence" => "an array".into(),
        "a boolean" | "a string" => expected.into(),
        e if e.starts_with("struct ") => "an object".into(),
        e if e.starts_with("a map") => "an object".into(),
        e => e.into(),
    }
}
