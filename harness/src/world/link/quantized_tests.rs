//! The compact sweep encoding against the raw sweep on every shipped link scenario: each
//! scenario's mission driven in the in-process world (to each field and scout it, then home), and at
//! every sweep the scan of the points as `mm_zstd` gives them back against the scan of the raw
//! points: every range within the resolution (and the same bins hit), and the same
//! `returns_on_route` decisions (the places with returns on the route ahead) at every scan. The
//! lossless encodings give the raw scan bit for bit.

use acres_link_protocol::{Sweep, SweepEncoding, RESOLUTION_M};
use acres_vehicle::scan::{scan, ScanConfig};
use acres_vehicle::{SkillKind, SkillRequest};

use crate::world::knowledge::Knowledge;
use crate::world::{CoreWorld, WorldPort};

/// Steps each leg may take.
const LEG_STEPS: usize = 12_000;

#[test]
fn the_scan_of_a_quantized_sweep_is_the_raw_ones_within_the_resolution_with_the_same_decisions() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files: Vec<_> = std::fs::read_dir(root.join("scenarios/link"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "the shipped link scenarios: {files:?}");
    let (mut scans, mut decisions, mut on_route) = (0usize, 0usize, 0usize);
    for f in &files {
        let sc = crate::scenario::load(f, &root.join("scenarios/maps")).unwrap();
        let mut w = CoreWorld::new(&sc, 0);
        let cfg = w.lidar().map_or_else(ScanConfig::default, |l| ScanConfig::for_mount(l.mount_height_m));
        let (mut raw_k, mut q_k) = (Knowledge::default(), Knowledge::default());
        let mut legs: Vec<SkillRequest> = sc
            .fields
            .iter()
            .flat_map(|field| {
                [SkillKind::Goto, SkillKind::Scout].map(|k| SkillRequest {
                    skill: Some(k),
                    field: Some(field.clone()),
                    ..Default::default()
                })
            })
            .collect();
        legs.push(SkillRequest { skill: Some(SkillKind::ReturnHome), ..Default::default() });
        for leg in &legs {
            if w.status().skill.is_some() {
                // A leg held to its step limit (an object on the lane): ended, the next goes on.
                w.request(&SkillRequest { skill: Some(SkillKind::Stop), ..Default::default() });
                w.step();
            }
            let reply = w.request(leg);
            assert!(reply.accepted, "{}: {leg:?}: {reply:?}", sc.id);
            for _ in 0..LEG_STEPS {
                let swept = w.step();
                if swept {
                    let raw = w.scan().copied().expect("a scan");
                    let points = &w.sweep().expect("its sweep").points;
                    assert_eq!(
                        scan(points, &cfg).ranges_m,
                        raw.ranges_m,
                        "{}: the scan function is the world's",
                        sc.id
                    );
                    for e in [SweepEncoding::F32, SweepEncoding::F32Zstd] {
                        let back = Sweep::pack(0.0, points, e).unpack().unwrap();
                        let again = scan(&back, &cfg);
                        assert_eq!(
                            again.ranges_m.map(f32::to_bits),
                            raw.ranges_m.map(f32::to_bits),
                            "{}: {e} is bit for bit",
                            sc.id
                        );
                    }
                    let back = Sweep::pack(0.0, points, SweepEncoding::MmZstd).unpack().unwrap();
                    let q = scan(&back, &cfg);
                    for (bin, (a, b)) in raw.ranges_m.iter().zip(&q.ranges_m).enumerate() {
                        let tol = RESOLUTION_M + 4.0 * f64::from(f32::EPSILON) * f64::from(a.abs().min(1e3));
                        assert!(
                            a.is_finite() == b.is_finite()
                                && (!a.is_finite() || f64::from((a - b).abs()) <= tol),
                            "{}: bin {bin}: {a} raw, {b} quantized",
                            sc.id
                        );
                    }
                    let sensor = w.sensor_pose();
                    raw_k.update(&raw, sensor, 40.0);
                    q_k.update(&q, sensor, 40.0);
                    let route = w.route_ahead();
                    let (a, b) = (raw_k.on_route(&route), q_k.on_route(&route));
                    assert_eq!(a, b, "{}: returns on route at t {:.2} s", sc.id, w.t_s());
                    scans += 1;
                    decisions += usize::from(!route.is_empty());
                    on_route += usize::from(!a.is_empty());
                }
                if w.status().skill.is_none() {
                    break;
                }
            }
        }
    }
    // The comparison saw the scenarios' objects on their routes, not only empty fields.
    assert!(scans > 500 && decisions > 500, "{scans} scans, {decisions} with a route ahead");
    assert!(on_route > 0, "no scan had returns on the route: the test would prove nothing");
    eprintln!("{scans} scans compared, {decisions} with a route ahead, {on_route} with returns on it");
}
