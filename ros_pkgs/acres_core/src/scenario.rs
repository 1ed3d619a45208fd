//! The world of a scenario: what the harness's in-process world and the core node both start
//! from.

use acres_scenario::{EventKind, Scenario, When};

use crate::objects::Object;
use crate::{ObjectAction, ObjectEvent, ObjectWhen, WorldConfig};

/// The world configuration of a checked scenario with `seed`, and its object events (the
/// scenario's `request` events are the harness's, not the world's).
pub fn world_of(sc: &Scenario, seed: u64) -> (WorldConfig, Vec<ObjectEvent>) {
    let mut wc = WorldConfig::new(sc.map_data.clone(), sc.condition, sc.start_pose());
    wc.seed = seed;
    wc.sensing = sc.sensing.clone();
    let graph = sc.lane_graph();
    let mut events = Vec::new();
    for e in &sc.events {
        let when = match e.when {
            When::At { t_s } => ObjectWhen::At(t_s),
            When::AfterSeen { id, delay_s } => ObjectWhen::AfterSeen { id, delay_s },
        };
        let action = match &e.what {
            EventKind::ObjectAdd { id, kind, place } => {
                let pose = place.resolve(&sc.map_data, &graph).expect("a checked scenario's places resolve");
                ObjectAction::Add(Object { id: *id, kind: *kind, pose })
            }
            EventKind::ObjectRemove { id } => ObjectAction::Remove(*id),
            EventKind::Request { .. } => continue,
        };
        events.push(ObjectEvent { when, action });
    }
    (wc, events)
}
