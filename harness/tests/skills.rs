//! The skill server driving ACRES Core: every skill's success path, every result code, the
//! shield, contact, determinism and the cost tables.

mod support;
use support::root;

use std::path::Path;
use std::sync::Arc;

use acres_core::objects::{Object, ObjectKind, Place, PlaceLeg};
use acres_core::{ObjectAction, ObjectEvent, ObjectWhen, WorldConfig};
use acres_farm::geom::Pose;
use acres_farm::{Condition, LaneGraph, Map};
use acres_harness::world::sim::CoreSim;
use acres_vehicle::{ResultCode, ServerOptions, SkillEvent, SkillKind, SkillRequest};

fn map() -> Arc<Map> {
    Arc::new(Map::load(&root().join("scenarios/maps/default.json")).unwrap())
}

fn sim_at(start: Pose, opts: impl FnOnce(&mut ServerOptions)) -> CoreSim {
    let m = map();
    let mut o = ServerOptions::new(Condition::Dry.speed_limits());
    opts(&mut o);
    CoreSim::new(WorldConfig::new(m, Condition::Dry, start), o)
}

fn home() -> Pose {
    Pose::default()
}

/// Steps until a `skill_ended` event (or the time runs out); returns it and every event seen.
fn run_until_end(sim: &mut CoreSim, max_s: f64) -> (Option<SkillEvent>, Vec<SkillEvent>) {
    let mut all = Vec::new();
    let steps = (max_s / 0.05) as usize;
    for _ in 0..steps {
        sim.step();
        for e in sim.drain_events() {
            let end = e.name.as_str() == "skill_ended";
            all.push(e.clone());
            if end {
                return (Some(e), all);
            }
        }
    }
    (None, all)
}

fn place_object(id: u32, kind: ObjectKind, place: Place) -> ObjectEvent {
    let m = map();
    let pose = place.resolve(&m, &LaneGraph::new(&m)).unwrap();
    ObjectEvent { when: ObjectWhen::At(0.0), action: ObjectAction::Add(Object { id, kind, pose }) }
}

/// A sim at home whose shield blocks after `blocked_s`, with a truck across the route to F55
/// 300 m on, gone `leaves_s` after the LiDAR first sees it.
fn truck_on_the_way_to_f55(blocked_s: f64, leaves_s: f64) -> CoreSim {
    let mut sim = sim_at(home(), |o| o.blocked_s = blocked_s);
    let truck = place_object(
        1,
        ObjectKind::Truck,
        Place::RouteTo { route_to: "F55".into(), leg: PlaceLeg::Goto, at_m: 300.0, across: true },
    );
    sim.world.schedule([
        truck,
        ObjectEvent {
            when: ObjectWhen::AfterSeen { id: 1, delay_s: leaves_s },
            action: ObjectAction::Remove(1),
        },
    ]);
    sim
}

#[test]
fn goto_scout_return_home_succeed_and_the_field_counts_as_scouted() {
    let mut sim = sim_at(home(), |_| {});
    assert!(sim.request(&SkillRequest::new(SkillKind::Goto).field("F51")).accepted);
    let (e, _) = run_until_end(&mut sim, 600.0);
    assert_eq!(e.unwrap().code, Some(ResultCode::Succeeded));
    let entry = map().fields["F51"].entry_pos;
    assert!(sim.world.odometry().pose.pos().dist(entry) < 1.5);

    assert!(sim.request(&SkillRequest::new(SkillKind::Scout).field("F51")).accepted);
    let (e, all) = run_until_end(&mut sim, 900.0);
    assert_eq!(e.unwrap().code, Some(ResultCode::Succeeded));
    assert!(all.iter().any(|e| e.name.as_str() == "field_scouted"));
    assert_eq!(sim.server.status().scouted, ["F51"]);
    assert!(sim.server.status().coverage["F51"] >= 0.98);

    assert!(sim.request(&SkillRequest::new(SkillKind::ReturnHome)).accepted);
    let (e, _) = run_until_end(&mut sim, 600.0);
    assert_eq!(e.unwrap().code, Some(ResultCode::Succeeded));
    assert!(sim.world.odometry().pose.pos().dist(map().home()) < 1.5);
    assert_eq!(sim.world.contact_steps(), 0);
}

#[test]
fn wait_succeeds_after_its_seconds() {
    let mut sim = sim_at(home(), |_| {});
    assert!(sim.request(&SkillRequest::new(SkillKind::Wait).seconds(12.0)).accepted);
    let (e, _) = run_until_end(&mut sim, 60.0);
    let e = e.unwrap();
    assert_eq!(e.code, Some(ResultCode::Succeeded));
    assert!((e.t_s - 12.0).abs() < 0.06, "ended at {}", e.t_s);
}

#[test]
fn stop_then_resume_continues_where_it_stopped() {
    let mut sim = sim_at(home(), |_| {});
    sim.request(&SkillRequest::new(SkillKind::Goto).field("F55"));
    for _ in 0..(40.0 / 0.05) as usize {
        sim.step();
    }
    let r = sim.request(&SkillRequest::new(SkillKind::Stop));
    assert!(r.accepted);
    let ended: Vec<_> = sim.drain_events().into_iter().filter(|e| e.name.as_str() == "skill_ended").collect();
    assert_eq!(ended[0].code, Some(ResultCode::Stopped));
    for _ in 0..100 {
        sim.step();
    }
    assert!(sim.world.odometry().speed_mps < 0.01, "the vehicle brakes to a stop");
    let x_stop = sim.world.odometry().pose.x;
    let r = sim.request(&SkillRequest::new(SkillKind::Resume));
    assert!(r.accepted, "{r:?}");
    assert!(r.route_m.unwrap() < 750.0 - x_stop + 40.0);
    let (e, _) = run_until_end(&mut sim, 600.0);
    assert_eq!(e.unwrap().code, Some(ResultCode::Succeeded));
    assert!(sim.world.odometry().pose.pos().dist(map().fields["F55"].entry_pos) < 1.5);
}

#[test]
fn rejections_name_their_cause() {
    let mut sim = sim_at(home(), |_| {});
    let cases = [
        (SkillRequest::new(SkillKind::Scout).field("F53"), "not at the entry of F53"),
        (SkillRequest::new(SkillKind::Goto).field("F99"), "unknown place \"F99\""),
        (SkillRequest::new(SkillKind::Goto), "goto needs a field or a place"),
        (SkillRequest::new(SkillKind::Resume), "nothing to resume"),
        (SkillRequest::new(SkillKind::Wait), "wait needs seconds > 0"),
        (
            SkillRequest { speed_cap_mps: Some(-1.0), ..SkillRequest::new(SkillKind::Goto).field("F51") },
            "speed_cap_mps must be a positive number",
        ),
    ];
    for (req, cause) in cases {
        let r = sim.request(&req);
        assert!(!r.accepted);
        assert_eq!(r.code, Some(ResultCode::Rejected));
        assert!(r.cause.as_deref().unwrap().contains(cause), "{:?} lacks {cause}", r.cause);
    }
    assert!(sim.request(&SkillRequest::new(SkillKind::Goto).field("F51")).accepted);
    let r = sim.request(&SkillRequest::new(SkillKind::Goto).field("F53"));
    assert!(r.cause.unwrap().starts_with("busy: goto #"));
}

#[test]
fn the_trajectory_checker_refuses_a_route_out_of_the_corridor() {
    // Off the map, north of H: the way to the nearest lane crosses open country.
    let mut sim = sim_at(Pose { x: 40.0, y: 25.0, yaw: 0.0 }, |_| {});
    let r = sim.request(&SkillRequest::new(SkillKind::Goto).field("F53"));
    assert!(!r.accepted);
    assert!(r.cause.unwrap().starts_with("the route leaves the corridor at ("));
}

#[test]
fn failed_when_the_vehicle_leaves_its_route() {
    let mut sim = sim_at(home(), |o| o.max_track_error_m = 0.02);
    assert!(sim.request(&SkillRequest::new(SkillKind::Goto).field("F51")).accepted);
    let (e, _) = run_until_end(&mut sim, 600.0);
    let e = e.unwrap();
    assert_eq!(e.code, Some(ResultCode::Failed));
    assert!(e.cause.unwrap().starts_with("left the route"));
}

#[test]
fn the_shield_holds_for_a_truck_and_releases_when_it_leaves() {
    let mut sim = truck_on_the_way_to_f55(1000.0, 80.0);
    sim.request(&SkillRequest::new(SkillKind::Goto).field("F55"));
    let (e, all) = run_until_end(&mut sim, 900.0);
    assert_eq!(e.unwrap().code, Some(ResultCode::Succeeded));
    let hold = all.iter().find(|e| e.name.as_str() == "shield_hold").expect("a hold");
    let release = all.iter().find(|e| e.name.as_str() == "shield_release").expect("a release");
    assert!(release.t_s > hold.t_s + 20.0);
    let ahead = json(&hold.detail)["ahead_m"].as_f64().unwrap();
    assert!(ahead > 4.0 && ahead < 11.0, "held at {ahead} m");
    assert_eq!(sim.world.contact_steps(), 0, "no contact with the truck");
}

#[test]
fn blocked_after_blocked_s_then_resume_after_the_object_leaves() {
    let mut sim = truck_on_the_way_to_f55(30.0, 90.0);
    sim.request(&SkillRequest::new(SkillKind::Goto).field("F55"));
    let (e, all) = run_until_end(&mut sim, 900.0);
    let e = e.unwrap();
    assert_eq!(e.code, Some(ResultCode::Blocked));
    let hold = all.iter().find(|e| e.name.as_str() == "shield_hold").unwrap();
    assert!((e.t_s - hold.t_s - 30.0).abs() < 0.1, "blocked {} s after the hold", e.t_s - hold.t_s);
    assert!(e.cause.unwrap().contains("held the vehicle for 30 s"));
    // The hold is closed by a release when the skill ends, and placed at the truck's face.
    let n = all.len();
    assert_eq!(all[n - 2].name.as_str(), "shield_release");
    assert_eq!(json(&all[n - 2].detail)["why"], "the skill ended");
    let truck = Place::RouteTo { route_to: "F55".into(), leg: PlaceLeg::Goto, at_m: 300.0, across: true };
    let centre = truck.resolve(&map(), &LaneGraph::new(&map())).unwrap();
    let hold_x = json(&hold.detail)["x"].as_f64().unwrap();
    assert!(
        (hold_x - (centre.x - 1.25)).abs() < 0.3,
        "hold placed at {hold_x}, the face is at {}",
        centre.x - 1.25
    );
    for _ in 0..(80.0 / 0.05) as usize {
        sim.step();
    }
    assert!(sim.world.objects().is_empty());
    assert!(sim.request(&SkillRequest::new(SkillKind::Resume)).accepted);
    let (e, _) = run_until_end(&mut sim, 900.0);
    assert_eq!(e.unwrap().code, Some(ResultCode::Succeeded));
}

#[test]
fn a_person_on_the_loop_holds_the_scout() {
    let m = map();
    let entry = m.fields["F53"].entry_pos;
    let mut sim =
        sim_at(Pose { x: entry.x, y: entry.y, yaw: std::f64::consts::FRAC_PI_2 }, |o| o.blocked_s = 20.0);
    let person = place_object(
        2,
        ObjectKind::Person,
        Place::LoopOf { loop_of: "F53".into(), at_fraction: 0.1, across: false },
    );
    sim.world.schedule([person]);
    sim.request(&SkillRequest::new(SkillKind::Scout).field("F53"));
    let (e, _) = run_until_end(&mut sim, 900.0);
    assert_eq!(e.unwrap().code, Some(ResultCode::Blocked));
    assert_eq!(sim.world.contact_steps(), 0);
    let cov = sim.server.status().coverage["F53"];
    assert!(cov > 0.02 && cov < 0.12, "coverage {cov}");
}

fn mission_digest() -> (String, f64) {
    let mut sim = sim_at(home(), |_| {});
    let truck = place_object(
        1,
        ObjectKind::Truck,
        Place::RouteTo { route_to: "F51".into(), leg: PlaceLeg::Goto, at_m: 100.0, across: true },
    );
    sim.world.schedule([
        truck,
        ObjectEvent { when: ObjectWhen::AfterSeen { id: 1, delay_s: 20.0 }, action: ObjectAction::Remove(1) },
    ]);
    for req in
        [SkillRequest::new(SkillKind::Goto).field("F51"), SkillRequest::new(SkillKind::Scout).field("F51")]
    {
        sim.request(&req);
        run_until_end(&mut sim, 900.0);
    }
    (sim.world.digest(), sim.world.energy_mj())
}

#[test]
fn the_same_inputs_give_the_same_digest() {
    let a = mission_digest();
    let b = mission_digest();
    assert_eq!(a, b);
    assert_eq!(a.0.len(), 16);
}

#[test]
fn regenerated_cost_tables_equal_the_checked_in_ones() {
    let m = map();
    for c in Condition::ALL {
        let t = acres_harness::planners::planning::learn::learn_table(&m, c).unwrap();
        let file = root()
            .join("scenarios/costs")
            .join(acres_harness::planners::planning::costs::table_file_name("default", c.as_str()));
        let on_disk = std::fs::read_to_string(&file).unwrap();
        assert!(
            t.to_json() == on_disk,
            "{} differs from a fresh learn; run `cargo run --release -p acres-harness -- learn-costs`",
            file.display()
        );
    }
}

#[test]
fn speed_limits_hold_on_lanes_and_in_fields_under_each_condition() {
    for c in Condition::ALL {
        let m = map();
        let limits = c.speed_limits();
        let mut sim = CoreSim::new(WorldConfig::new(m.clone(), c, home()), ServerOptions::new(limits));
        let (mut lane_max, mut field_max) = (0.0f64, 0.0f64);
        for req in [
            SkillRequest::new(SkillKind::Goto).field("F53"),
            SkillRequest::new(SkillKind::Scout).field("F53"),
        ] {
            assert!(sim.request(&req).accepted);
            for _ in 0..(900.0 / 0.05) as usize {
                sim.step();
                let v = sim.world.vehicle();
                if m.field_at(v.pose.pos()).is_some() {
                    field_max = field_max.max(v.wheel_speed_mps);
                } else {
                    lane_max = lane_max.max(v.wheel_speed_mps);
                }
                if sim.drain_events().iter().any(|e| e.name.as_str() == "skill_ended") {
                    break;
                }
            }
        }
        // The wheel speed reaches the lane limit on the long trunk and never passes a limit
        // (a goto ends standing at the entry, so a scout enters its field slowly).
        assert!((lane_max - limits.lane_mps).abs() < 0.05, "{c:?}: lane max {lane_max}");
        assert!(field_max <= limits.field_mps + 1e-9, "{c:?}: field max {field_max}");
        assert!(field_max >= limits.field_mps - 0.05, "{c:?}: field max {field_max}");
    }
}

#[test]
fn the_route_ahead_stays_the_stopped_motions_while_a_wait_runs() {
    let mut sim = sim_at(home(), |_| {});
    sim.request(&SkillRequest::new(SkillKind::Goto).field("F55"));
    for _ in 0..200 {
        sim.step();
    }
    let running = sim.server.route_ahead();
    sim.request(&SkillRequest::new(SkillKind::Stop));
    assert!(sim.request(&SkillRequest::new(SkillKind::Wait).seconds(10.0)).accepted);
    let waiting = sim.server.route_ahead();
    assert!(!waiting.is_empty());
    assert_eq!(waiting.last(), running.last(), "the way ahead still ends at F55's entry");
}

#[test]
fn a_loop_that_starts_at_the_entry_still_counts_as_scouted() {
    let text = std::fs::read_to_string(root().join("scenarios/maps/default.json")).unwrap();
    let text = text.replacen(
        "\"entry\": \"E51\"",
        "\"entry\": \"E51\", \"scout_loop\": [[160, 30], [222, 38], [222, 172], [108, 172], [108, 38]]",
        1,
    );
    let m = Arc::new(Map::parse(&text, Path::new("entry_loop.json")).unwrap());
    assert_eq!(m.fields["F51"].scout_loop[0], m.fields["F51"].entry_pos);
    let start = Pose { x: 160.0, y: 30.0, yaw: std::f64::consts::FRAC_PI_2 };
    let mut sim = CoreSim::new(
        WorldConfig::new(m, Condition::Dry, start),
        ServerOptions::new(Condition::Dry.speed_limits()),
    );
    assert!(sim.request(&SkillRequest::new(SkillKind::Scout).field("F51")).accepted);
    let (e, all) = run_until_end(&mut sim, 900.0);
    assert_eq!(e.unwrap().code, Some(ResultCode::Succeeded));
    assert!(
        all.iter().any(|e| e.name.as_str() == "field_scouted"),
        "coverage {:?}",
        sim.server.status().coverage
    );
}

/// An event's details as the JSON of the run folder.
fn json(d: &acres_vehicle::EventDetail) -> serde_json::Value {
    serde_json::to_value(d).expect("details serialize")
}

/// The status differs from `before` in more than its numbers (progress, metres left, coverage
/// values).
fn more_than_numbers(before: &acres_vehicle::Status, now: acres_vehicle::StatusRef<'_>) -> bool {
    let mut numbers = now.to_status();
    numbers.progress = before.progress;
    numbers.remaining_m = before.remaining_m;
    for (k, v) in numbers.coverage.iter_mut() {
        if let Some(b) = before.coverage.get(k) {
            *v = *b;
        }
    }
    numbers != *before
}

#[test]
fn the_status_revision_changes_whenever_more_than_the_status_numbers_change() {
    // A hold, a block, an interrupted motion resumed, a scout (a new coverage entry, a field
    // scouted), a wait, a rejection and a stop: each change must come with a new revision.
    let mut sim = truck_on_the_way_to_f55(30.0, 90.0);
    let requests = [
        SkillRequest::new(SkillKind::Goto).field("F55"),
        SkillRequest::new(SkillKind::Resume),
        SkillRequest::new(SkillKind::Scout).field("F55"),
        SkillRequest::new(SkillKind::Wait).seconds(3.0),
        SkillRequest::new(SkillKind::Goto).field("F99"),
        SkillRequest::new(SkillKind::ReturnHome),
        SkillRequest::new(SkillKind::Stop),
    ];
    let mut before = sim.server.status();
    let mut revision = sim.server.status_ref().revision;
    let (mut changes, mut same_steps, mut number_steps) = (0, 0, 0);
    let mut check = |sim: &CoreSim, what: &str| {
        let now = sim.server.status_ref();
        assert!(now.revision.is_some());
        if now.revision == revision {
            assert!(
                !more_than_numbers(&before, now),
                "{what}: the status changed at revision {revision:?}: {before:?} -> {now:?}"
            );
            same_steps += 1;
            number_steps += usize::from(now.to_status() != before);
        } else if more_than_numbers(&before, now) {
            changes += 1;
        }
        before = now.to_status();
        revision = now.revision;
    };
    for req in &requests {
        sim.request(req);
        check(&sim, &format!("after {req:?}"));
        let mut quiet = 0;
        // Step until the skill ends (or 80 s after a block, for the truck to leave).
        for _ in 0..(900.0 / 0.05) as usize {
            sim.step();
            let ended = sim.drain_events().iter().any(|e| e.name.as_str() == "skill_ended");
            check(&sim, &format!("step at {:.2} s", sim.world.t_s()));
            if ended || sim.server.status_ref().skill.is_none() {
                quiet += 1;
                if quiet > (80.0 / 0.05) as usize || sim.server.status_ref().interrupted.is_none() {
                    break;
                }
            }
        }
    }
    // Holds, ends, new coverage, scouted fields and requests each changed more than numbers.
    assert!(changes >= 10, "{changes} changes of more than the numbers");
    assert!(number_steps > 1000, "{number_steps} steps changed only the numbers");
    assert!(same_steps > number_steps, "{same_steps} steps at the same revision");
    assert_eq!(sim.server.status().scouted, ["F55"]);
}
