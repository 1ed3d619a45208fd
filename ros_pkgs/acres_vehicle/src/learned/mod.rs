//! Learned skills: a folder with `skill.toml` ([`spec`]) and `policy.onnx` ([`policy`]), named
//! by a scenario's `skills` key (relative to the scenario file). The skill server runs one as a
//! bounded execution ([`crate::skills`]): tick by tick, the policy maps the observation
//! ([`observe`]) to a command that the shield passes or holds (never clamps); it ends when its
//! success predicate holds (`succeeded`), it leaves its scope (`region_exit`), `max_s` passes
//! (`timeout`), the shield holds it for `blocked_s` (`blocked`), or the policy fails or runs
//! over its per-tick budget (`reactive_fault`). docs/learned-skills.md is the reference.
//!
//! The planner gets each learned skill as a tool of its own name and argument schema; the
//! request it makes is the skill server's ordinary [`crate::SkillRequest`] with
//! [`crate::SkillKind::Learned`] and the skill's name, so it travels over the link unchanged
//! and the vehicle node runs it from the same folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub mod observe;
pub mod policy;
pub mod spec;

pub use observe::ObsField;
pub use policy::Policy;
pub use spec::{LearnedError, SkillSpec};

/// The file of a skill folder that says what the skill is.
pub const SPEC_FILE: &str = "skill.toml";
/// The file of a skill folder that holds the policy.
pub const POLICY_FILE: &str = "policy.onnx";

/// A loaded learned skill: its spec and its optimised policy.
#[derive(Debug, Clone)]
pub struct LearnedSkill {
    /// `skill.toml`.
    pub spec: SkillSpec,
    /// `policy.onnx`, loaded and optimised.
    pub policy: Policy,
    /// The folder it was loaded from.
    pub dir: PathBuf,
}

impl LearnedSkill {
    /// The skill's (tool) name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Loads a skill folder: reads and checks `skill.toml`, then loads and optimises the policy.
    pub fn load(dir: &Path) -> Result<LearnedSkill, LearnedError> {
        let spec_file = dir.join(SPEC_FILE);
        let text = std::fs::read_to_string(&spec_file).map_err(|e| LearnedError {
            file: spec_file.clone(),
            key: "$".into(),
            line: None,
            message: format!("cannot read the skill folder's {SPEC_FILE}: {e}"),
        })?;
        let spec = spec::parse(&text, &spec_file)?;
        let policy_file = dir.join(POLICY_FILE);
        if !policy_file.is_file() {
            return Err(LearnedError {
                file: policy_file,
                key: "$".into(),
                line: None,
                message: format!("the skill folder has no {POLICY_FILE}"),
            });
        }
        let policy = Policy::load(&policy_file, spec.observation.len()).map_err(|message| LearnedError {
            file: policy_file,
            key: "$".into(),
            line: None,
            message: format!("{message} (skill.toml's observation has {} fields)", spec.observation.len()),
        })?;
        Ok(LearnedSkill { spec, policy, dir: dir.to_path_buf() })
    }
}

/// The learned skills of a scenario, loaded in its `skills` order: each folder relative to the
/// scenario file's folder. Two skills of one name are refused.
pub fn scenario_skills(sc: &acres_scenario::Scenario) -> Result<Vec<Arc<LearnedSkill>>, LearnedError> {
    let base = sc.file.parent().unwrap_or(Path::new("."));
    let mut out: Vec<Arc<LearnedSkill>> = Vec::new();
    for (i, rel) in sc.skills.iter().enumerate() {
        let skill = LearnedSkill::load(&base.join(rel)).map_err(|mut e| {
            e.message = format!("{} (the scenario's skills[{i}])", e.message);
            e
        })?;
        if let Some(first) = out.iter().find(|s| s.name() == skill.name()) {
            return Err(LearnedError {
                file: skill.dir.join(SPEC_FILE),
                key: "name".into(),
                line: spec::line_of(
                    &std::fs::read_to_string(skill.dir.join(SPEC_FILE)).unwrap_or_default(),
                    "name",
                ),
                message: format!("\"{}\" is already the name of {}", skill.name(), first.dir.display()),
            });
        }
        out.push(Arc::new(skill));
    }
    Ok(out)
}
