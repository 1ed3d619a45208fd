//! The local planners of a scenario, as the skill server's factory: the in-tree ones of
//! `acres_vehicle` (`default`, `pure_pursuit`) and the **process plugin** — an external process
//! in any language that steers over the line protocol of `docs/local-planner-protocol.md`.
//!
//! The vehicle library knows no JSON-lines (ARCHITECTURE.md, "The contract"), so the plugin lives here, outside it,
//! and reaches the skill server only as a [`LocalPlannerFactory`] of
//! [`acres_vehicle::local_planner::LocalPlanner`] trait objects
//! (`SkillServer::set_local_planner`).
//!
//! # Layout
//!
//! - [`factory_of`]: the factory of a scenario's `local_planner`.
//! - [`process`]: the process plugin: [`process::wire`] the protocol's messages (one encode, one
//!   decode, the version), [`process::child`] the process (spawn, reader thread, kill on drop),
//!   [`process::ProcessPlanner`] the planner.
//!
//! # Determinism
//!
//! The in-process world steps in lockstep with the plugin (every step waits for its reply), so
//! a deterministic plugin gives bit-identical runs; `acres-harness replay` starts the plugin
//! again and re-runs it (no command is recorded), and its digest check tells whether the plugin
//! was deterministic.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::dbg_macro, clippy::todo)]

use std::sync::Arc;

use acres_scenario::local_planner::LocalPlannerKey;
use acres_scenario::Scenario;
use acres_vehicle::local_planner::{Builtin, LocalPlannerFactory};

pub mod process;

pub use process::{ProcessConfig, ProcessFactory, ProcessPlanner};

/// The factory of the local planner a scenario names (`local_planner`, checked at load).
pub fn factory_of(sc: &Scenario) -> Arc<dyn LocalPlannerFactory> {
    factory_of_key(&sc.local_planner_key())
}

/// The factory of a checked `local_planner` value.
pub fn factory_of_key(key: &LocalPlannerKey) -> Arc<dyn LocalPlannerFactory> {
    match key {
        LocalPlannerKey::Builtin(name) => {
            Builtin::parse(name).expect("the scenario check knows only the in-tree planners").factory()
        }
        LocalPlannerKey::Process(cmd) => Arc::new(ProcessFactory::new(cmd.clone(), ProcessConfig::default())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acres_scenario::local_planner::BUILTIN_PLANNERS;

    #[test]
    fn every_name_the_scenario_check_takes_has_an_in_tree_planner() {
        for name in BUILTIN_PLANNERS {
            assert_eq!(Builtin::parse(name).map(|b| b.as_str()), Some(name));
            let f = factory_of_key(&LocalPlannerKey::Builtin(name.into()));
            assert_eq!(f.name(), name);
        }
    }
}
