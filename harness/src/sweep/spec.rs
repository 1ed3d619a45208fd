//! The sweep spec: one TOML file naming what to run. Every key is checked before any run starts;
//! a bad file is refused with the file, the key path and the problem
//! (`sweep.toml: at modes[1]: unknown variant `fast`, expected one of ...`), exit 2.
//!
//! ```toml
//! scenarios = ["../scenarios"]      # files or folders, relative to this file
//! models = ["scripted"]             # model configurations (names or TOML paths)
//! modes = ["checked", "text"]       # classical runs once, with the model "none"
//! profiles = ["vehicle"]            # default ["vehicle"]
//! repeats = 3                       # default 1
//! seed = 1                          # repeat r runs with seed + r - 1 ...
//! # seeds = [7, 8, 9]               # ... or one seed per repeat
//! workers = 2                       # runs at once in a shard (default 1)
//! record = "all"                    # all, interface or none (default all)
//!
//! [options]
//! think_s = 2.0                     # the scripted planner's think time per call
//! pace = 0.0
//! operator = false
//! recovery_mode = "menu"            # off or menu (default: each scenario's)
//! recovery_options = { hold_s = 30.0 }
//!
//! [limits]                          # override the model files' limits
//! calls_per_run = 200
//! call_s = 60.0
//! wake_s = 300.0
//!
//! [sensing.exact]                   # the sensing axis (optional): each scenario runs once
//! [sensing.mild]                    # per setting, as `<scenario>-<setting>` with the
//! range_noise_m = 0.03              # scenario's `sensing` keys replaced by these
//! dropout = 0.05
//! spurious_per_sweep = 1.0
//! pose_noise_m = 0.05
//! yaw_noise_rad = 0.005
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::runfolder::kinds::Record;
use crate::runfolder::rows::{Mode, Profile};
use crate::scenario::{RecoveryMode, Scenario, Sensing};

/// A bad sweep spec.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The file cannot be read.
    #[error("{file}: cannot read the sweep spec: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A key is wrong (syntax, type, value).
    #[error("{file}: at {key}: {problem}")]
    Key {
        /// The file.
        file: PathBuf,
        /// The key path (`modes[1]`), or `(file)` with the line for syntax errors.
        key: String,
        /// What is wrong.
        problem: String,
    },
}

/// The file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    scenarios: Vec<PathBuf>,
    maps: Option<PathBuf>,
    #[serde(default = "default_models")]
    models: Vec<String>,
    modes: Vec<Mode>,
    #[serde(default = "default_profiles")]
    profiles: Vec<Profile>,
    #[serde(default = "one_u32")]
    repeats: u32,
    #[serde(default = "one_u64")]
    seed: u64,
    seeds: Option<Vec<u64>>,
    #[serde(default = "one_usize")]
    workers: usize,
    #[serde(default)]
    record: Record,
    #[serde(default)]
    options: SpecOptions,
    #[serde(default)]
    limits: SpecLimits,
    #[serde(default)]
    sensing: BTreeMap<String, Sensing>,
}

fn default_models() -> Vec<String> {
    vec!["scripted".into()]
}
fn default_profiles() -> Vec<Profile> {
    vec![Profile::Vehicle]
}
fn one_u32() -> u32 {
    1
}
fn one_u64() -> u64 {
    1
}
fn one_usize() -> usize {
    1
}

/// The run options of every run of a sweep (`[options]`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpecOptions {
    /// The scripted planner's think time per call, mission seconds.
    pub think_s: f64,
    /// At most this many mission seconds per wall second (0: no limit).
    pub pace: f64,
    /// The tool ask_operator is on.
    pub operator: bool,
    /// The recovery mode of each run (default: each scenario's).
    pub recovery_mode: Option<SpecRecovery>,
    /// Recovery options (`hold_s`).
    pub recovery_options: BTreeMap<String, f64>,
}

impl Default for SpecOptions {
    fn default() -> Self {
        SpecOptions {
            think_s: 2.0,
            pace: 0.0,
            operator: false,
            recovery_mode: None,
            recovery_options: BTreeMap::new(),
        }
    }
}

/// A recovery mode as the spec writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecRecovery {
    /// No recovery menu.
    Off,
    /// The recovery menu.
    Menu,
}

impl SpecRecovery {
    /// The scenario format's value.
    pub fn mode(self) -> RecoveryMode {
        match self {
            SpecRecovery::Off => RecoveryMode::Off,
            SpecRecovery::Menu => RecoveryMode::Menu,
        }
    }
}

/// Limits over the model files' (`[limits]`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpecLimits {
    /// Model calls per run (then the run ends `limit_model_calls`).
    pub calls_per_run: Option<u64>,
    /// The time of one model call, s.
    pub call_s: Option<f64>,
    /// The time of one wake-up, s.
    pub wake_s: Option<f64>,
}

/// A checked spec: paths made absolute against the spec's folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The spec file.
    pub file: PathBuf,
    /// Scenario files or folders.
    pub scenarios: Vec<PathBuf>,
    /// The maps folder, if given.
    pub maps: Option<PathBuf>,
    /// Model configurations (names or files), in spec order, without duplicates.
    pub models: Vec<String>,
    /// Modes, without duplicates.
    pub modes: Vec<Mode>,
    /// Input profiles, without duplicates.
    pub profiles: Vec<Profile>,
    /// The seed of each repeat (its length is the number of repeats).
    pub seeds: Vec<u64>,
    /// Runs at once in one shard.
    pub workers: usize,
    /// What each run records.
    pub record: Record,
    /// Run options.
    pub options: SpecOptions,
    /// Limits.
    pub limits: SpecLimits,
    /// The sensing axis: settings by name (empty: each scenario as it is).
    pub sensing: BTreeMap<String, Sensing>,
}

impl Spec {
    /// The scenarios of the sweep: as loaded without a sensing axis; with one, each scenario
    /// once per setting (in name order), its id `<id>-<setting>` and its `sensing` replaced.
    pub fn with_sensing(&self, scenarios: Vec<Scenario>) -> Vec<Scenario> {
        if self.sensing.is_empty() {
            return scenarios;
        }
        let mut out = Vec::with_capacity(scenarios.len() * self.sensing.len());
        for sc in &scenarios {
            for (name, s) in &self.sensing {
                let mut v = sc.clone();
                v.id = format!("{}-{name}", sc.id);
                v.sensing = s.clone();
                out.push(v);
            }
        }
        out
    }
}

impl Spec {
    /// Reads and checks a spec file.
    pub fn load(file: &Path) -> Result<Spec, SpecError> {
        let text = std::fs::read_to_string(file)
            .map_err(|source| SpecError::Io { file: file.to_path_buf(), source })?;
        Spec::parse(&text, file)
    }

    /// Parses and checks a spec's text; `file` names it in errors and anchors relative paths.
    pub fn parse(text: &str, file: &Path) -> Result<Spec, SpecError> {
        let err = |key: &str, problem: String| SpecError::Key {
            file: file.to_path_buf(),
            key: key.into(),
            problem,
        };
        let de = toml::Deserializer::new(text);
        let f: SpecFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let key = e.path().to_string();
            let inner = e.into_inner();
            let line = inner.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            let key = match (key.as_str(), line) {
                (".", Some(l)) | ("", Some(l)) => format!("(file) line {l}"),
                (".", None) | ("", None) => "(file)".into(),
                (k, Some(l)) => format!("{k} (line {l})"),
                (k, None) => k.to_string(),
            };
            SpecError::Key { file: file.to_path_buf(), key, problem: inner.message().trim().to_string() }
        })?;
        let base = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let anchor = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
        if f.scenarios.is_empty() {
            return Err(err("scenarios", "names no scenario file or folder".into()));
        }
        for (i, s) in f.scenarios.iter().enumerate() {
            if !anchor(s).exists() {
                return Err(err(
                    &format!("scenarios[{i}]"),
                    format!("{}: no such file or folder", anchor(s).display()),
                ));
            }
        }
        for (key, empty) in [
            ("models", f.models.is_empty()),
            ("modes", f.modes.is_empty()),
            ("profiles", f.profiles.is_empty()),
        ] {
            if empty {
                return Err(err(key, "must name at least one".into()));
            }
        }
        for (i, m) in f.models.iter().enumerate() {
            if m.is_empty() || m.chars().any(|c| c.is_whitespace()) {
                return Err(err(&format!("models[{i}]"), format!("\"{m}\" is not a model name or file")));
            }
        }
        if f.repeats == 0 {
            return Err(err("repeats", "must be at least 1".into()));
        }
        check_options(&f).map_err(|(key, problem)| err(&key, problem))?;
        let seeds = match f.seeds {
            Some(s) if s.len() != f.repeats as usize => {
                return Err(err(
                    "seeds",
                    format!("{} seeds for {} repeats: give one seed per repeat", s.len(), f.repeats),
                ))
            }
            Some(s) => s,
            None => (0..u64::from(f.repeats)).map(|r| f.seed.wrapping_add(r)).collect(),
        };
        Ok(Spec {
            file: file.to_path_buf(),
            scenarios: f.scenarios.iter().map(|p| anchor(p)).collect(),
            maps: f.maps.as_deref().map(anchor),
            models: dedup(f.models),
            modes: dedup(f.modes),
            profiles: dedup(f.profiles),
            seeds,
            workers: f.workers,
            record: f.record,
            options: f.options,
            limits: f.limits,
            sensing: f.sensing,
        })
    }
}

/// The checks of `workers`, `[options]` and `[limits]`: the key and the problem.
fn check_options(f: &SpecFile) -> Result<(), (String, String)> {
    let err = |key: &str, problem: String| (key.to_string(), problem);
    if f.workers == 0 {
        return Err(err("workers", "must be at least 1".into()));
    }
    let o = &f.options;
    if !(o.think_s.is_finite() && o.think_s >= 0.0) {
        return Err(err("options.think_s", "must be a number of seconds >= 0".into()));
    }
    if !(o.pace.is_finite() && o.pace >= 0.0) {
        return Err(err("options.pace", "must be a number >= 0".into()));
    }
    for (k, v) in &o.recovery_options {
        if k != "hold_s" {
            return Err(err(
                &format!("options.recovery_options.{k}"),
                "unknown option; the options are hold_s".into(),
            ));
        }
        if !(v.is_finite() && *v > 0.0) {
            return Err(err(
                &format!("options.recovery_options.{k}"),
                "must be a positive number of seconds".into(),
            ));
        }
    }
    for (name, s) in &f.sensing {
        let ok = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !name.contains("__");
        if !ok {
            return Err(err(
                &format!("sensing.{name}"),
                "a setting's name is a part of scenario ids: letters, digits, '_' and '-', no \"__\"".into(),
            ));
        }
        if let Err((key, problem)) = s.check() {
            return Err(err(&format!("sensing.{name}.{key}"), problem));
        }
    }
    let l = &f.limits;
    if l.calls_per_run == Some(0) {
        return Err(err("limits.calls_per_run", "must be at least 1".into()));
    }
    for (k, v) in [("limits.call_s", l.call_s), ("limits.wake_s", l.wake_s)] {
        if v.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
            return Err(err(k, "must be a positive number of seconds".into()));
        }
    }
    Ok(())
}

fn dedup<T: PartialEq>(v: Vec<T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Spec, String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        Spec::parse(text, &dir.join("sweep.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_full_spec_parses_with_seeds_per_repeat() {
        let s = parse("scenarios = [\"scenarios\"]\nmodes = [\"checked\", \"text\", \"checked\"]\nrepeats = 3\nseed = 7\n")
            .unwrap();
        assert_eq!(s.modes, vec![Mode::Checked, Mode::Text]);
        assert_eq!(s.seeds, vec![7, 8, 9]);
        assert_eq!(s.models, vec!["scripted".to_string()]);
        assert_eq!(s.record, Record::All);
    }

    #[test]
    fn bad_keys_name_the_file_and_the_key_path() {
        let e = parse("scenarios = [\"scenarios\"]\nmodes = [\"checked\", \"fast\"]\n").unwrap_err();
        assert!(e.contains("sweep.toml: at modes[1]"), "{e}");
        let e =
            parse("scenarios = [\"scenarios\"]\nmodes = [\"checked\"]\n[options]\nthinks = 1\n").unwrap_err();
        assert!(e.contains("at options"), "{e}");
        assert!(e.contains("thinks"), "{e}");
        let e = parse("scenarios = [\"nowhere\"]\nmodes = [\"checked\"]\n").unwrap_err();
        assert!(e.contains("at scenarios[0]: ") && e.contains("no such file"), "{e}");
        let e = parse("scenarios = [\"scenarios\"]\nmodes = [\"checked\"]\nrepeats = 2\nseeds = [1]\n")
            .unwrap_err();
        assert!(e.contains("at seeds: 1 seeds for 2 repeats"), "{e}");
        let e = parse("scenarios = [\"scenarios\"]\nmodes = [\"checked\"]\nrecord = \"some\"\n").unwrap_err();
        assert!(e.contains("at record"), "{e}");
        let e = parse("scenarios = [\"scenarios\"\nmodes = 1\n").unwrap_err();
        assert!(e.contains("sweep.toml: at (file) line"), "{e}");
    }

    #[test]
    fn the_sensing_axis_is_checked_and_makes_one_scenario_per_setting() {
        let head = "scenarios = [\"scenarios\"]\nmodes = [\"checked\"]\n";
        let e = parse(&format!("{head}[sensing.mild]\ndropout = 1.5\n")).unwrap_err();
        assert!(e.contains("sweep.toml: at sensing.mild.dropout: must be below 1"), "{e}");
        let e = parse(&format!("{head}[sensing.mild]\nrange_noise = 0.1\n")).unwrap_err();
        assert!(e.contains("at sensing") && e.contains("range_noise"), "{e}");
        let e = parse(&format!("{head}[sensing.\"a b\"]\n")).unwrap_err();
        assert!(e.contains("at sensing.a b: a setting's name"), "{e}");
        let s = parse(&format!("{head}[sensing.exact]\n[sensing.mild]\nrange_noise_m = 0.03\n")).unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let sc = crate::scenario::load_all(
            &[root.join("scenarios/t1_01_one_field.json")],
            &root.join("scenarios/maps"),
        )
        .unwrap();
        let v = s.with_sensing(sc);
        let ids: Vec<&str> = v.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["t1_01_one_field-exact", "t1_01_one_field-mild"]);
        assert!(v[0].sensing.is_off());
        assert_eq!(v[1].sensing.range_noise_m, 0.03);
    }
}
