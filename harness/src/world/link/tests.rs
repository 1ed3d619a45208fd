//! The link world against a scripted bridge on a real socket (127.0.0.1, no DDS): the route
//! ahead comes from the observation, a skill whose `skill_ended` event is lost ends on its
//! goal's `result`, once, and a sweep line pairs with the step of its stamp whichever comes
//! first.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use acres_farm::geom::Vec2;
use acres_link_protocol as link;
use acres_msgs::acres_interfaces::{Observation, SkillEvent as EventMsg};
use acres_msgs::geometry_msgs::Point;
use acres_msgs::std_msgs::Header;
use acres_vehicle::{EventName, ResultCode, SkillKind, SkillRequest, SkillState};
use link::FromBridge;

use super::{LinkOptions, LinkWorld};
use crate::world::WorldPort;

/// A bridge that speaks the protocol from a script: it attaches the harness, sends `first`,
/// answers pings, answers each `skill` with what `on_skill` gives, and sends what the test
/// hands it.
struct ScriptedBridge {
    port: u16,
    out: Arc<Mutex<Option<TcpStream>>>,
}

fn line(m: &FromBridge) -> String {
    link::encode(m)
}

impl ScriptedBridge {
    fn start(
        first: FromBridge,
        on_skill: impl Fn(&link::SkillRequest) -> Vec<FromBridge> + Send + 'static,
    ) -> ScriptedBridge {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let out: Arc<Mutex<Option<TcpStream>>> = Arc::new(Mutex::new(None));
        let o = out.clone();
        std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut w = s.try_clone().unwrap();
            let hello = link::Hello {
                version: link::PROTOCOL_VERSION,
                bridge: "scripted".into(),
                token_required: false,
                truth: false,
                nonce: link::auth::new_nonce(),
                sweep_encodings: link::SweepEncoding::ALL.to_vec(),
            };
            w.write_all(line(&FromBridge::Hello(hello)).as_bytes()).unwrap();
            let mut l = String::new();
            r.read_line(&mut l).unwrap();
            assert!(matches!(link::decode::<link::FromHarness>(&l), Ok(link::FromHarness::Attach(_))), "{l}");
            w.write_all(line(&FromBridge::Welcome(link::Welcome { t_s: 10.0, proof: None })).as_bytes())
                .unwrap();
            w.write_all(line(&first).as_bytes()).unwrap();
            *o.lock().unwrap() = Some(w);
            loop {
                l.clear();
                if r.read_line(&mut l).unwrap_or(0) == 0 {
                    return;
                }
                let answer = match link::decode::<link::FromHarness>(&l) {
                    Ok(link::FromHarness::Ping(p)) => {
                        vec![FromBridge::Pong(link::Pong { n: p.n, t_s: 10.0 })]
                    }
                    Ok(link::FromHarness::Skill(q)) => on_skill(&q),
                    _ => vec![],
                };
                let mut g = o.lock().unwrap();
                for m in answer {
                    let _ = g.as_mut().unwrap().write_all(line(&m).as_bytes());
                }
            }
        });
        ScriptedBridge { port, out }
    }

    fn send(&self, m: &FromBridge) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            if let Some(w) = self.out.lock().unwrap().as_mut() {
                w.write_all(line(m).as_bytes()).unwrap();
                return;
            }
            assert!(std::time::Instant::now() < deadline, "the harness did not attach");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

fn obs(t_s: f64, running: Option<(u64, &str)>, route: &[(f64, f64)]) -> Observation {
    let (skill, id, state, target) = match running {
        Some((id, target)) => ("goto", id, "running", target),
        None => ("", 0, "idle", ""),
    };
    Observation {
        header: Header {
            stamp: acres_msgs::builtin_interfaces::Time::from_secs_f64(t_s),
            frame_id: "map".into(),
        },
        skill: skill.into(),
        skill_id: id,
        state: state.into(),
        target: target.into(),
        progress: if running.is_some() { 0.5 } else { 0.0 },
        remaining_m: if running.is_some() { 12.0 } else { f64::NAN },
        ahead_m: f64::INFINITY,
        hold_since_s: f64::NAN,
        energy_estimate_mj: f64::NAN,
        route_ahead: route.iter().map(|&(x, y)| Point { x, y, z: 0.0 }).collect(),
        ..Default::default()
    }
}

fn event(t_s: f64, name: &str, id: u64) -> EventMsg {
    EventMsg {
        header: Header {
            stamp: acres_msgs::builtin_interfaces::Time::from_secs_f64(t_s),
            frame_id: "map".into(),
        },
        event: name.into(),
        skill_id: id,
        skill: "goto".into(),
        code: if name == "skill_ended" { "succeeded".into() } else { String::new() },
        target: "F53".into(),
        route_m: if name == "skill_started" { 24.0 } else { f64::NAN },
        remaining_m: f64::NAN,
        seconds: f64::NAN,
        ahead_m: f64::NAN,
        stopping_m: f64::NAN,
        hold_at: Point { x: f64::NAN, y: f64::NAN, z: f64::NAN },
        held_s: f64::NAN,
        ..Default::default()
    }
}

fn step(seq: u64, observation: Observation, events: Vec<EventMsg>) -> FromBridge {
    FromBridge::Step(link::Step { seq, observation, events, truth: None, dropped_sweeps: 0 })
}

fn scenario() -> crate::scenario::Scenario {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    crate::scenario::load(&root.join("scenarios/link/link_sim_f53.json"), &root.join("scenarios/maps"))
        .unwrap()
}

/// The link world of `scenario()` through a plaintext link to 127.0.0.1:`port`, asking `encoding`.
fn connect_plain(port: u16, encoding: link::SweepEncoding) -> LinkWorld {
    let opts = LinkOptions {
        host: "127.0.0.1".into(),
        port,
        silent_s: 30.0,
        token: None,
        pins: vec![],
        sweep_encoding: encoding,
    };
    LinkWorld::connect(&scenario(), &opts).unwrap()
}

const ROUTE: [(f64, f64); 3] = [(0.0, 0.0), (10.0, 0.0), (20.0, 5.0)];

#[test]
fn the_route_ahead_is_the_observations_and_a_lost_skill_ended_is_made_from_the_result_once() {
    let bridge = ScriptedBridge::start(step(1, obs(10.05, None, &[]), vec![]), |q| {
        let started = vec![event(10.1, "skill_started", 5)];
        vec![
            FromBridge::Reply(link::SkillReply { id: q.id, accepted: true, cause: String::new() }),
            step(2, obs(10.1, Some((5, "F53")), &ROUTE), started),
        ]
    });
    let mut w = connect_plain(bridge.port, link::SweepEncoding::MmZstd);
    assert!(w.route_ahead().is_empty(), "idle: no route");
    let req = SkillRequest { skill: Some(SkillKind::Goto), field: Some("F53".into()), ..Default::default() };
    let reply = w.request(&req);
    assert!(reply.accepted && reply.id == Some(5), "{reply:?}");
    // The skill drives; its goal's result comes, its `skill_ended` never does.
    let mut seq = 2;
    for k in 1..=4 {
        seq += 1;
        bridge.send(&step(seq, obs(10.1 + 0.05 * k as f64, Some((5, "F53")), &ROUTE[1..]), vec![]));
    }
    let done =
        link::SkillDone { id: 1, skill_id: 5, code: "succeeded".into(), cause: "arrived at F53".into() };
    bridge.send(&FromBridge::Result(done));
    for k in 5..=40 {
        seq += 1;
        bridge.send(&step(seq, obs(10.1 + 0.05 * k as f64, None, &[]), vec![]));
    }
    let mut ends = Vec::new();
    let mut routes = Vec::new();
    let mut idle_at = None;
    while w.t_s() < 10.1 + 0.05 * 40.0 - 10.05 - 1e-6 {
        w.step();
        routes.push(w.route_ahead());
        ends.extend(w.drain_events().into_iter().filter(|e| e.name == EventName::SkillEnded));
        if idle_at.is_none() && w.status().state == SkillState::Idle {
            idle_at = Some(w.t_s());
        }
    }
    assert!(routes
        .iter()
        .any(|r| r == &ROUTE[1..].iter().map(|&(x, y)| Vec2::new(x, y)).collect::<Vec<_>>()));
    assert!(routes.last().unwrap().is_empty(), "no route once idle");
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!((ends[0].id, ends[0].code), (Some(5), Some(ResultCode::Succeeded)));
    assert_eq!(ends[0].cause.as_deref(), Some("arrived at F53"));
    // The status stayed running until the end was made (never a skill gone without its end),
    // then went idle; the end came within the grace after the result.
    let idle_at = idle_at.expect("the status went idle");
    assert!((ends[0].t_s - idle_at).abs() < 1e-9, "idle at {idle_at}, ended at {}", ends[0].t_s);
    assert!(ends[0].t_s <= 0.05 * 5.0 + super::ends::RESULT_GRACE_S + 0.1, "{}", ends[0].t_s);

    // A second skill whose event comes (after its result): one end, the event's.
    seq += 1;
    bridge.send(&step(seq, obs(12.2, Some((6, "F53")), &ROUTE), vec![event(12.2, "skill_started", 6)]));
    bridge.send(&FromBridge::Result(link::SkillDone {
        id: 2,
        skill_id: 6,
        code: "succeeded".into(),
        cause: "r".into(),
    }));
    seq += 1;
    bridge.send(&step(seq, obs(12.25, None, &[]), vec![event(12.25, "skill_ended", 6)]));
    for k in 1..=30 {
        seq += 1;
        bridge.send(&step(seq, obs(12.25 + 0.05 * k as f64, None, &[]), vec![]));
    }
    let mut ends = Vec::new();
    for _ in 0..32 {
        w.step();
        ends.extend(w.drain_events().into_iter().filter(|e| e.name == EventName::SkillEnded));
    }
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0].cause, None, "the event's end, not one made from the result");
    w.end("done");
}

#[test]
fn a_sweep_line_pairs_with_the_step_of_its_stamp_and_gives_the_scan_and_the_points() {
    let points: Vec<[f32; 4]> =
        (0..360).map(|i| [4.0 + (i % 7) as f32, (i as f32) * 0.01 - 1.8, 0.5, 9.0]).collect();
    let bridge = ScriptedBridge::start(step(1, obs(10.05, None, &[]), vec![]), |_| vec![]);
    let mut w = connect_plain(bridge.port, link::SweepEncoding::F32Zstd);
    let sweep = |t_s: f64, pts: &[[f32; 4]]| {
        FromBridge::Sweep(link::Sweep::pack(t_s, pts, link::SweepEncoding::F32Zstd))
    };
    // The sweep before its step (the order RustDDS tends to deliver).
    bridge.send(&sweep(10.1, &points));
    let mut moved = obs(10.1, None, &[]);
    moved.x_m = 3.0;
    bridge.send(&step(2, moved, vec![]));
    assert!(w.step(), "the step of the sweep's stamp carries its scan");
    assert_eq!(w.sweep().map(|s| &s.points[..]), Some(&points[..]), "the sweep's points, bit for bit");
    assert!((w.sweep().unwrap().stamp_s - 0.05).abs() < 1e-9, "stamped with its step's mission time");
    let scan = w.scan().expect("a scan from the sweep");
    assert!(scan.ranges_m.iter().any(|r| r.is_finite()), "the scan sees the points");
    let lidar = w.lidar().expect("the scenario's LiDAR geometry");
    assert!((w.sensor_pose().x - (3.0 + lidar.mount_forward_m)).abs() < 1e-9);
    // The step before its sweep (Fast DDS's order), the step applied before the sweep came:
    // the scan comes with the next step, placed from the pose of the sweep's own step.
    let mut at = obs(10.15, None, &[]);
    at.x_m = 4.0;
    bridge.send(&step(3, at, vec![]));
    assert!(!w.step(), "no sweep yet");
    let later: Vec<[f32; 4]> = points.iter().map(|p| [p[0] + 1.0, p[1], p[2], p[3]]).collect();
    bridge.send(&sweep(10.15, &later));
    // The sweep line is read before the next step's line: the same socket, in order.
    let mut next = obs(10.2, None, &[]);
    next.x_m = 5.0;
    bridge.send(&step(4, next, vec![]));
    assert!(w.step(), "the late sweep's scan comes with the next step");
    assert_eq!(w.sweep().map(|s| &s.points[..]), Some(&later[..]));
    assert!((w.sensor_pose().x - (4.0 + lidar.mount_forward_m)).abs() < 1e-9, "the pose of its own step");
    assert_eq!(w.vehicle().pose.x, 5.0);
    // A sweep with no step within one control step is dropped and counted.
    bridge.send(&sweep(9.0, &points));
    bridge.send(&step(5, obs(10.25, None, &[]), vec![]));
    assert!(!w.step());
    assert_eq!(w.stats_now().dropped_sweeps, 1);
    w.end("done");
}

#[test]
fn a_resume_takes_the_resumed_kinds_started_event_and_shows_it_running() {
    // The vehicle starts the kind a resume continues: its event is a goto's, `resumes_id` set.
    let bridge = ScriptedBridge::start(step(1, obs(10.05, None, &[]), vec![]), |q| {
        let mut started = event(10.1, "skill_started", 6);
        started.resumes_id = 5;
        started.remaining_m = 12.0;
        vec![
            FromBridge::Reply(link::SkillReply { id: q.id, accepted: true, cause: String::new() }),
            step(2, obs(10.1, Some((6, "F53")), &ROUTE), vec![started]),
        ]
    });
    let mut w = connect_plain(bridge.port, link::SweepEncoding::MmZstd);
    let reply = w.request(&SkillRequest { skill: Some(SkillKind::Resume), ..Default::default() });
    assert!(reply.accepted, "{reply:?}");
    assert_eq!(
        (reply.skill, reply.id, reply.route_m),
        (Some(SkillKind::Goto), Some(6), Some(12.0)),
        "{reply:?}"
    );
    // Before its steps are applied, the status already shows the resumed goto starting.
    assert_eq!(w.status().skill, Some(SkillKind::Goto));
    assert_eq!(w.status().target.as_deref(), Some("F53"));
    w.end("done");
}
