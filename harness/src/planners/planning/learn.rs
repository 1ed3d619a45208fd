//! The cost-table learner: drives every mission leg of a map in ACRES Core under one condition,
//! from a standing start with the heading the leg begins with, and records its time and energy.
//!
//! Legs: `goto` from H and from every field entry to every field, `scout` of every field, and
//! `return` from every field. No objects, no LiDAR (a clear world). Output is deterministic: the
//! same map and condition give byte-identical tables.

use acres_farm::HOME;
use std::sync::Arc;

use crate::planners::planning::costs::{CostTable, LegCost, COSTS_SCHEMA};
use acres_core::WorldConfig;
use acres_farm::geom::Pose;
use acres_farm::route::{leg_path, LaneGraph, Leg, LegKind};
use acres_farm::{Condition, Map};
use acres_vehicle::{ResultCode, ServerOptions, SkillKind, SkillRequest};

use crate::world::sim::CoreSim;

/// A leg that could not be driven.
#[derive(Debug, thiserror::Error)]
#[error("leg {key}: {why}")]
pub struct LearnError {
    /// The leg key.
    pub key: String,
    /// What happened.
    pub why: String,
}

/// Every leg of a map, in a fixed order.
pub fn all_legs(map: &Map) -> Vec<Leg> {
    let ids: Vec<&String> = map.fields.keys().collect();
    let mut legs = Vec::new();
    for f in &ids {
        legs.push(Leg::goto(HOME, f));
        for g in &ids {
            if f != g {
                legs.push(Leg::goto(f, g));
            }
        }
        legs.push(Leg::scout(f));
        legs.push(Leg::ret(f));
    }
    legs
}

/// Drives one leg and returns its cost.
pub fn drive_leg(
    map: &Arc<Map>,
    graph: &LaneGraph,
    condition: Condition,
    leg: &Leg,
) -> Result<LegCost, LearnError> {
    let err = |why: String| LearnError { key: leg.key(), why };
    let path = leg_path(map, graph, leg).ok_or_else(|| err("no path".into()))?;
    let p0 = path.points[0];
    let start = Pose { x: p0.x, y: p0.y, yaw: path.yaw_at(0.0) };
    let mut wc = WorldConfig::new(map.clone(), condition, start);
    wc.lidar = None;
    let mut sim = CoreSim::new(wc, ServerOptions::new(condition.speed_limits()));
    let req = match leg.kind {
        LegKind::Goto => SkillRequest::new(SkillKind::Goto).field(&leg.to),
        LegKind::Scout => SkillRequest::new(SkillKind::Scout).field(&leg.from),
        LegKind::Return => SkillRequest::new(SkillKind::ReturnHome),
    };
    let reply = sim.request(&req);
    if !reply.accepted {
        return Err(err(format!("refused: {:?}", reply.cause)));
    }
    let max_steps = (3600.0 / sim.world.config().dt_s) as u64;
    for _ in 0..max_steps {
        sim.step();
        for e in sim.drain_events() {
            if e.name == acres_vehicle::EventName::SkillEnded {
                if e.code != Some(ResultCode::Succeeded) {
                    return Err(err(format!("ended {:?}: {:?}", e.code, e.cause)));
                }
                return Ok(LegCost {
                    time_s: round3(sim.world.t_s()),
                    energy_mj: round3(sim.world.energy_mj()),
                    length_m: round3(path.length_m()),
                });
            }
        }
    }
    Err(err("did not end within 3600 s".into()))
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Learns the whole table of a map under one condition.
pub fn learn_table(map: &Arc<Map>, condition: Condition) -> Result<CostTable, LearnError> {
    let graph = LaneGraph::new(map);
    let mut legs = std::collections::BTreeMap::new();
    for leg in all_legs(map) {
        let c = drive_leg(map, &graph, condition, &leg)?;
        legs.insert(leg.key(), c);
    }
    Ok(CostTable {
        schema: COSTS_SCHEMA.into(),
        map: map.name.clone(),
        condition: condition.as_str().into(),
        legs,
    })
}
