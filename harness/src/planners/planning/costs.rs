//! Cost tables: the time and fuel energy of every mission leg under one condition, learned by
//! driving each leg in ACRES Core (`acres-harness learn-costs`), and the cost of a plan.
//!
//! A table is one JSON file `<map>.<condition>.json` (schema `acres-costs-1`) in the cost folder:
//! `scenarios/costs/`; the binaries take another folder from the environment variable
//! `ACRES_COST_TABLES`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use acres_farm::route::Leg;

/// The schema name of a cost table file.
pub const COSTS_SCHEMA: &str = "acres-costs-1";
/// The planned time is the table time times this factor (a typical value, not a bound).
pub const PLANNED_TIME_FACTOR: f64 = 1.6;
/// The planned energy is the table energy times this factor.
pub const PLANNED_ENERGY_FACTOR: f64 = 1.5;

/// What one leg cost when it was driven.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LegCost {
    /// Mission time from dispatch to the skill's end, s.
    pub time_s: f64,
    /// Fuel energy, MJ.
    pub energy_mj: f64,
    /// Length of the leg's path, m.
    pub length_m: f64,
}

/// The cost table of one map and one condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostTable {
    /// [`COSTS_SCHEMA`].
    pub schema: String,
    /// The map name.
    pub map: String,
    /// The condition, e.g. `dry`.
    pub condition: String,
    /// The cost of each leg by its key ([`Leg::key`]).
    pub legs: BTreeMap<String, LegCost>,
}

/// A cost table that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    /// The file is missing or unreadable.
    #[error("{file}: cannot read the cost table: {source} (regenerate with `cargo run --release -p acres-harness -- learn-costs`, or set ACRES_COST_TABLES)")]
    Io {
        /// The file.
        file: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a cost table.
    #[error("{file}: at {path}: {message}")]
    Invalid {
        /// The file.
        file: PathBuf,
        /// JSON path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A leg is not in the table.
    #[error("the cost table {map}.{condition} has no leg {key}")]
    MissingLeg {
        /// Map.
        map: String,
        /// Condition.
        condition: String,
        /// Leg key.
        key: String,
    },
}

/// The shipped folder of the cost tables, `<repo>/scenarios/costs`. (The binaries let
/// `ACRES_COST_TABLES` name another; this library reads no environment.)
pub fn cost_folder(repo_root: &Path) -> PathBuf {
    repo_root.join("scenarios").join("costs")
}

/// The file name of a table.
pub fn table_file_name(map: &str, condition: &str) -> String {
    format!("{map}.{condition}.json")
}

impl CostTable {
    /// Loads `<folder>/<map>.<condition>.json`.
    pub fn load(folder: &Path, map: &str, condition: &str) -> Result<CostTable, CostError> {
        let file = folder.join(table_file_name(map, condition));
        let text =
            std::fs::read_to_string(&file).map_err(|source| CostError::Io { file: file.clone(), source })?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        let t: CostTable = serde_path_to_error::deserialize(de).map_err(|e| CostError::Invalid {
            file: file.clone(),
            path: e.path().to_string(),
            message: e.into_inner().to_string(),
        })?;
        if t.schema != COSTS_SCHEMA || t.map != map || t.condition != condition {
            return Err(CostError::Invalid {
                file,
                path: "schema".into(),
                message: format!("expected a {COSTS_SCHEMA} table of {map}.{condition}"),
            });
        }
        Ok(t)
    }

    /// The cost of one leg.
    pub fn leg(&self, leg: &Leg) -> Result<LegCost, CostError> {
        self.legs.get(&leg.key()).copied().ok_or_else(|| CostError::MissingLeg {
            map: self.map.clone(),
            condition: self.condition.clone(),
            key: leg.key(),
        })
    }

    /// The table cost (no factors) of visiting `visits` in order from home.
    pub fn mission_cost(&self, visits: &[String], return_home: bool) -> Result<PlanCost, CostError> {
        let mut cost = PlanCost::default();
        for leg in Leg::mission(visits, return_home) {
            let c = self.leg(&leg)?;
            cost.table_time_s += c.time_s;
            cost.table_energy_mj += c.energy_mj;
            cost.legs.push((leg.key(), c));
        }
        cost.planned_time_s = cost.table_time_s * PLANNED_TIME_FACTOR;
        cost.planned_energy_mj = cost.table_energy_mj * PLANNED_ENERGY_FACTOR;
        Ok(cost)
    }

    /// Writes the table as pretty JSON with a trailing newline (stable bytes).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a cost table serializes");
        s.push('\n');
        s
    }
}

/// The cost of a plan.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct PlanCost {
    /// Sum of the table times, s.
    pub table_time_s: f64,
    /// Sum of the table energies, MJ.
    pub table_energy_mj: f64,
    /// Table time × [`PLANNED_TIME_FACTOR`].
    pub planned_time_s: f64,
    /// Table energy × [`PLANNED_ENERGY_FACTOR`].
    pub planned_energy_mj: f64,
    /// Each leg with its table cost.
    pub legs: Vec<(String, LegCost)>,
}
