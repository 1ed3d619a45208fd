//! Bench of the map pictures: draws and encodes the default map view of a busy scene (3 fields in
//! play, a driven path of 2000 points, 500 LiDAR returns) many times and prints the mean draw
//! and encode times and the PNG size. Writes samples to `/tmp/acres_picture_*.png`.
//!
//! Run with `cargo bench -p acres-harness --bench picture [-- N]`.

use std::path::Path;
use std::time::Instant;

use acres_core::objects::ObjectKind;
use acres_farm::geom::{Obb, Pose, Vec2};
use acres_farm::Map;
use acres_harness::tools::picture::{self, Around, Region, Scene, View};

/// A scene in the middle of a mission: F51 scouted, the vehicle on its way round F53.
fn busy_scene(map: &Map, view: View) -> Scene<'_> {
    let mut s = Scene::new(map, view);
    s.frame_id = "f0012".into();
    s.t_s = 1234.5;
    s.fields_in_play = vec!["F51".into(), "F53".into(), "F57".into()];
    s.scouted = vec!["F51".into()];
    let f53 = &map.fields["F53"];
    let lp = f53.loop_polyline();
    // Driven: H → J1 → E51, round F51's loop, back to J1 → J2 → E53 and 60 % of F53's loop.
    let mut legs: Vec<Vec2> = vec![Vec2::new(0.0, 0.0), Vec2::new(160.0, 0.0), Vec2::new(160.0, 30.0)];
    legs.extend(map.fields["F51"].loop_polyline().points);
    legs.extend([
        Vec2::new(160.0, 30.0),
        Vec2::new(160.0, 0.0),
        Vec2::new(420.0, 0.0),
        Vec2::new(420.0, 30.0),
    ]);
    let done = 0.6 * lp.length_m();
    legs.extend(lp.points.iter().zip(&lp.cum_m).filter(|(_, s)| **s < done).map(|(p, _)| *p));
    legs.push(lp.point_at(done));
    let path = acres_farm::geom::Polyline::new(legs);
    s.driven = (0..2000)
        .map(|k| {
            let p = path.point_at(path.length_m() * k as f64 / 1999.0);
            Vec2::new(p.x + 0.3 * (k as f64 * 0.37).sin(), p.y + 0.3 * (k as f64 * 0.23).cos())
        })
        .collect();
    let here = lp.point_at(done);
    s.vehicle = Pose { x: here.x, y: here.y, yaw: lp.yaw_at(done) };
    s.route = lp.points.iter().zip(&lp.cum_m).filter(|(_, s)| **s > done).map(|(p, _)| *p).collect();
    s.route.insert(0, here);
    s.route.push(lp.points[0]);
    let mut plan = vec![vec![Vec2::new(0.0, 0.0), Vec2::new(160.0, 0.0), Vec2::new(160.0, 30.0)]];
    for (entry, junction, id) in
        [(Vec2::new(420.0, 30.0), 420.0, "F53"), (Vec2::new(940.0, 30.0), 940.0, "F57")]
    {
        plan.push(vec![Vec2::new(160.0, 30.0), Vec2::new(160.0, 0.0), Vec2::new(junction, 0.0), entry]);
        plan.push(map.fields[id].loop_polyline().points);
    }
    plan.push(vec![Vec2::new(940.0, 30.0), Vec2::new(940.0, 0.0), Vec2::new(0.0, 0.0)]);
    s.plan = plan;
    let ahead = lp.point_at(done + 25.0);
    s.site = Some(ahead);
    s.returns = (0..500)
        .map(|k| {
            let a = k as f64 * 0.0126 - 3.15;
            let r = 18.0 + 9.0 * ((k * 7919) % 100) as f64 / 100.0;
            Vec2::new(here.x + r * a.cos(), here.y + r * a.sin())
        })
        .collect();
    s.blocked = (0..12)
        .map(|k| Vec2::new(ahead.x.floor() + 0.5 + (k % 4) as f64, ahead.y.floor() + 0.5 + (k / 4) as f64))
        .collect();
    let yaw = lp.yaw_at(done + 25.0);
    s.objects =
        vec![(ObjectKind::Tractor, Obb { center: ahead, yaw, half_length_m: 2.25, half_width_m: 1.2 })];
    s.highlight = Some((Vec2::new(940.0, 30.0), "deadline at F57".into()));
    s
}

fn main() {
    let n: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(200);
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/maps/default.json");
    let map = Map::load(&file).expect("the default map loads");
    let scene = busy_scene(&map, View::Map);
    let (mut draw_s, mut encode_s, mut size) = (0.0, 0.0, 0);
    for _ in 0..n {
        let t0 = Instant::now();
        let raster = picture::draw(&scene);
        let t1 = Instant::now();
        let pic = raster.encode();
        let t2 = Instant::now();
        draw_s += (t1 - t0).as_secs_f64();
        encode_s += (t2 - t1).as_secs_f64();
        size = pic.png.len();
    }
    let (d, e) = (1e3 * draw_s / n as f64, 1e3 * encode_s / n as f64);
    println!(
        "picture map view, {n} runs: draw {d:.2} ms, encode {e:.2} ms, total {:.2} ms, png {size} bytes",
        d + e
    );

    let views = [
        ("map", View::Map),
        ("zoom", View::Zoom(Region::Around { what: Around::Vehicle, radius_m: None })),
        ("field", View::Zoom(Region::Field("F53".into()))),
        ("site", View::Zoom(Region::Around { what: Around::Site, radius_m: Some(15.0) })),
    ];
    let mut pngs = Vec::new();
    for (name, view) in views {
        let pic = picture::render(&busy_scene(&map, view));
        let out = format!("/tmp/acres_picture_{name}.png");
        std::fs::write(&out, &pic.png).expect("writes to /tmp");
        println!("{out}: view box {:?}, {} m/px, {} bytes", pic.view_box, pic.m_per_px, pic.png.len());
        pngs.push(pic.png);
    }
    let runs = (n / 10).max(1);
    let t0 = Instant::now();
    let mut cmp = Vec::new();
    for _ in 0..runs {
        cmp = picture::compare(&pngs[0], "f0012 map", &pngs[2], "f0014 zoom F53").expect("compare");
    }
    let ms = 1e3 * t0.elapsed().as_secs_f64() / runs as f64;
    println!("compare, {runs} runs: {ms:.2} ms, png {} bytes", cmp.len());
    std::fs::write("/tmp/acres_picture_compare.png", &cmp).expect("writes to /tmp");
}
