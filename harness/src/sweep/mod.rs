//! SWEEPS AND LEADERBOARDS: many runs (models × modes × profiles × scenarios × repeats) from one
//! spec, resumable and sharded onto a scheduler, and the leaderboard that merges their folders.
//!
//! A sweep's runs each have a deterministic id `model/mode/profile/scenario/rep` (rep from 1)
//! and a folder `<out>/<id>/` holding the run folder (`<scenario>__<mode>__<model>/`). A run is
//! made in `<out>/<id>.partial/` and renamed into place when it has ended, so a folder at the
//! id's place is always finished; a re-run skips every id whose folder validates with an end
//! row and redoes the rest (a `.partial` left by a killed sweep is removed first).
//!
//! A shard `I/N` (1-based) takes the ids whose [`stable_hash`] modulo N is I − 1: the split
//! depends only on the ids, never on the machine, the order or the worker count.
//!
//! - [`spec`]: the spec file (TOML), checked whole before any run.
//! - [`exec`]: the plan of a sweep, what is done already, the workers, the atomic rename.
//! - [`stats`]: the Wilson interval, pass^k and the flip rate.
//! - [`board`]: the leaderboard: merge, groups, table, JSON, CSV, Markdown.
//! - [`compare`]: the paired comparison of two groups (McNemar, paired bootstrap, flips).
//! - [`chart`]: the cost-vs-success picture (SVG and PNG) with its Pareto front.
//! - [`emit`]: the Slurm array script and the Kubernetes Indexed Job of a spec.

pub mod board;
pub mod chart;
pub mod compare;
pub mod emit;
pub mod exec;
pub mod spec;
pub mod stats;

use std::fmt;

use crate::runfolder::rows::{Mode, Profile};

pub use spec::{Spec, SpecError};

/// The file a sweep writes beside its runs: the spec's plan (every run id of the sweep, all
/// shards), read by the leaderboard to name the missing runs.
pub const PLAN_FILE: &str = "sweep.plan.json";

/// The suffix of a run being made (the run folder's own, [`crate::runfolder::writer::PARTIAL_SUFFIX`]).
pub use crate::runfolder::writer::PARTIAL_SUFFIX;

/// The model name of classical runs (no model).
pub const NO_MODEL: &str = "none";

/// The id of one run of a sweep.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId {
    /// The model configuration's name (`none` for classical runs).
    pub model: String,
    /// The mode.
    pub mode: Mode,
    /// The input profile.
    pub profile: Profile,
    /// The scenario id.
    pub scenario: String,
    /// The repeat, from 1.
    pub rep: u32,
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}/{}/{}", self.model, self.mode, self.profile, self.scenario, self.rep)
    }
}

impl RunId {
    /// Reads an id back from its text (`scripted/checked/vehicle/t1_01_one_field/2`).
    pub fn parse(s: &str) -> Option<RunId> {
        let parts: Vec<&str> = s.split('/').collect();
        let [model, mode, profile, scenario, rep] = parts[..] else { return None };
        Some(RunId {
            model: model.to_string(),
            mode: serde_json::from_value(serde_json::json!(mode)).ok()?,
            profile: serde_json::from_value(serde_json::json!(profile)).ok()?,
            scenario: scenario.to_string(),
            rep: rep.parse().ok().filter(|r| *r >= 1)?,
        })
    }
}

/// FNV-1a 64 of a text: the shard hash, the same on every machine and every build.
///
/// ```
/// assert_eq!(acres_harness::sweep::stable_hash(""), 0xcbf2_9ce4_8422_2325);
/// assert_eq!(acres_harness::sweep::stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
/// ```
pub fn stable_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A shard of a sweep: `index` of `count`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, 1..=count.
    pub index: u64,
    /// The number of shards.
    pub count: u64,
}

impl Shard {
    /// The whole sweep.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Parses `I/N`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {s}: expected I/N with 1 <= I <= N (1-based), e.g. 2/3");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        Shard::new(index, count).ok_or_else(bad)
    }

    /// A shard if `1 <= index <= count`.
    pub fn new(index: u64, count: u64) -> Option<Shard> {
        (count >= 1 && (1..=count).contains(&index)).then_some(Shard { index, count })
    }

    /// The shard from the schedulers' environment: Slurm's array (`SLURM_ARRAY_TASK_ID` with
    /// `SLURM_ARRAY_TASK_MIN` and `SLURM_ARRAY_TASK_COUNT`), else a Kubernetes Indexed Job's
    /// `JOB_COMPLETION_INDEX` (0-based) with `count` (the Job's completions, given on the command
    /// line). `None` when neither is set.
    pub fn from_env(
        get: impl Fn(&str) -> Option<String>,
        count: Option<u64>,
    ) -> Result<Option<Shard>, String> {
        let num = |k: &str| -> Result<Option<u64>, String> {
            match get(k).filter(|v| !v.is_empty()) {
                None => Ok(None),
                Some(v) => v.trim().parse().map(Some).map_err(|_| format!("{k}={v}: not a whole number")),
            }
        };
        if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
            let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(1);
            let n = num("SLURM_ARRAY_TASK_COUNT")?
                .ok_or("SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT")?;
            let index = id.checked_sub(min).map(|i| i + 1).unwrap_or(0);
            return Shard::new(index, n).map(Some).ok_or_else(|| {
                format!("SLURM_ARRAY_TASK_ID={id} with SLURM_ARRAY_TASK_MIN={min} and COUNT={n} is no shard")
            });
        }
        if let Some(i) = num("JOB_COMPLETION_INDEX")? {
            let n = count.ok_or("JOB_COMPLETION_INDEX is set: give the number of shards with --shards N")?;
            return Shard::new(i + 1, n)
                .map(Some)
                .ok_or_else(|| format!("JOB_COMPLETION_INDEX={i} is no shard of --shards {n}"));
        }
        Ok(None)
    }

    /// Whether a run belongs to this shard.
    pub fn takes(&self, id: &RunId) -> bool {
        stable_hash(&id.to_string()) % self.count == self.index - 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(rep: u32) -> RunId {
        RunId { model: "m".into(), mode: Mode::Text, profile: Profile::Vehicle, scenario: "s".into(), rep }
    }

    #[test]
    fn ids_round_trip_and_shards_partition_them() {
        let i = id(3);
        assert_eq!(i.to_string(), "m/text/vehicle/s/3");
        assert_eq!(RunId::parse("m/text/vehicle/s/3"), Some(i));
        assert_eq!(RunId::parse("m/text/vehicle/s/0"), None);
        assert_eq!(RunId::parse("m/fast/vehicle/s/1"), None);
        let ids: Vec<RunId> = (1..=200).map(id).collect();
        let shards: Vec<Shard> = (1..=3).map(|k| Shard::new(k, 3).unwrap()).collect();
        for i in &ids {
            assert_eq!(shards.iter().filter(|s| s.takes(i)).count(), 1, "{i}");
        }
        assert!(shards.iter().all(|s| ids.iter().any(|i| s.takes(i))));
    }

    #[test]
    fn shards_come_from_the_command_line_or_the_schedulers() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        assert!(Shard::parse("0/3").is_err() && Shard::parse("4/3").is_err() && Shard::parse("x").is_err());
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(a, _)| *a == k).map(|(_, v)| v.to_string())
        };
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ]);
        assert_eq!(Shard::from_env(slurm, None), Ok(Some(Shard { index: 2, count: 3 })));
        let k8s = env(&[("JOB_COMPLETION_INDEX", "0")]);
        assert_eq!(Shard::from_env(k8s, Some(4)), Ok(Some(Shard { index: 1, count: 4 })));
        assert!(Shard::from_env(k8s, None).unwrap_err().contains("--shards"));
        assert_eq!(Shard::from_env(env(&[]), None), Ok(None));
    }
}
