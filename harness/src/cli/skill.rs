//! `acres-harness skill --install DIR`: writes the agent skill `acres-planner` (a folder with a
//! `SKILL.md` in the Agent Skills format: front matter `name` = the folder's name, lower-case
//! with hyphens, and a `description` saying what and when) into `DIR`, e.g. `.claude/skills`.
//!
//! ```text
//! acres-harness skill --install .claude/skills
//! ```

use std::path::PathBuf;

use clap::Args;

use super::Failure;

/// The skill's name (its folder's name).
pub const SKILL_NAME: &str = "acres-planner";

/// The skill's text.
pub const SKILL_MD: &str = include_str!("../agents/SKILL.md");

/// Options of `skill`.
#[derive(Debug, Clone, Args)]
pub struct SkillArgs {
    /// The skills folder to install into (the skill goes to DIR/acres-planner/SKILL.md).
    #[arg(long)]
    pub install: PathBuf,
}

/// Writes the skill's folder and prints its path.
pub fn run(a: SkillArgs) -> Result<(), Failure> {
    let dir = a.install.join(SKILL_NAME);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::env(format!("{}: cannot create: {e}", dir.display())))?;
    let file = dir.join("SKILL.md");
    std::fs::write(&file, SKILL_MD)
        .map_err(|e| Failure::input(format!("{}: cannot write: {e}", file.display())))?;
    println!("{}", file.display());
    Ok(())
}
