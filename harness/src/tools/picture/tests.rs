//! Tests of the pictures: size, determinism, scale, views, the vehicle's pixel and compare.

use std::path::Path;

use acres_core::objects::ObjectKind;
use acres_farm::geom::{Obb, Pose, Vec2};
use acres_farm::Map;

use super::*;

fn default_map() -> Map {
    Map::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/maps/default.json")).unwrap()
}

/// A scene with something of every kind, the vehicle on the lane east of J1 heading east.
fn busy_scene(map: &Map, view: View) -> Scene<'_> {
    let mut s = Scene::new(map, view);
    s.frame_id = "f0007".into();
    s.t_s = 321.5;
    s.fields_in_play = vec!["F51".into(), "F53".into(), "F55".into()];
    s.scouted = vec!["F51".into()];
    s.route = vec![Vec2::new(200.0, 0.0), Vec2::new(420.0, 0.0), Vec2::new(420.0, 30.0)];
    s.plan = vec![
        vec![Vec2::new(0.0, 0.0), Vec2::new(420.0, 0.0)],
        vec![Vec2::new(420.0, 0.0), Vec2::new(680.0, 0.0)],
    ];
    s.driven = (0..200).map(|k| Vec2::new(k as f64, 0.3 * (k as f64 * 0.1).sin())).collect();
    s.vehicle = Pose { x: 200.0, y: 0.0, yaw: 0.0 };
    s.site = Some(Vec2::new(300.0, 0.0));
    s.blocked = vec![Vec2::new(300.5, 0.5), Vec2::new(301.5, 0.5)];
    s.returns = (0..50).map(|k| Vec2::new(290.0 + k as f64 * 0.2, -1.0)).collect();
    let truck = Obb { center: Vec2::new(300.0, 1.0), yaw: 0.2, half_length_m: 4.0, half_width_m: 1.25 };
    s.objects = vec![(ObjectKind::Truck, truck)];
    s.highlight = Some((Vec2::new(680.0, 0.0), "deadline".into()));
    s
}

fn decode_rgb(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(png_bytes).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    (info.width, info.height, buf)
}

#[test]
fn picture_is_640_by_692() {
    let map = default_map();
    for view in [View::Map, View::Zoom(Region::Field("F54".into()))] {
        let pic = render(&busy_scene(&map, view));
        let reader = png::Decoder::new(pic.png.as_slice()).read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (WIDTH, HEIGHT));
        assert_eq!((WIDTH, HEIGHT), (640, 692));
    }
}

#[test]
fn same_scene_gives_same_bytes() {
    let map = default_map();
    let a = render(&busy_scene(&map, View::Map));
    let b = render(&busy_scene(&map, View::Map));
    assert_eq!(a, b);
    let mut other = busy_scene(&map, View::Map);
    other.t_s += 1.0;
    assert_ne!(render(&other).png, a.png);
}

#[test]
fn m_per_px_matches_the_view_box() {
    let map = default_map();
    let views = [
        View::Map,
        View::Zoom(Region::Field("F60".into())),
        View::Zoom(Region::Around { what: Around::Vehicle, radius_m: None }),
        View::Zoom(Region::Around { what: Around::Site, radius_m: Some(25.0) }),
        View::Zoom(Region::Circle { x: 123.0, y: -45.0, radius_m: 7.5 }),
    ];
    for view in views {
        let pic = render(&busy_scene(&map, view.clone()));
        let [x0, y0, x1, y1] = pic.view_box;
        let px = f64::from(WIDTH);
        assert!(((x1 - x0) / px - pic.m_per_px).abs() < 1e-9, "{view:?}: {pic:?}");
        assert!(((y1 - y0) / px - pic.m_per_px).abs() < 1e-9, "{view:?}");
        assert_eq!(view_box(&busy_scene(&map, view)).unwrap(), pic.view_box);
    }
}

#[test]
fn map_view_holds_the_whole_map_and_a_circle_holds_its_circle() {
    let map = default_map();
    let [x0, y0, x1, y1] = render(&busy_scene(&map, View::Map)).view_box;
    let (lo, hi) = map.bounds();
    assert!(x0 < lo.x - map.home_radius_m && y0 < lo.y && x1 > hi.x && y1 > hi.y);
    let view = View::Zoom(Region::Circle { x: 123.0, y: -45.0, radius_m: 60.0 });
    let [x0, y0, x1, y1] = render(&busy_scene(&map, view)).view_box;
    assert!(x0 <= 63.0 && x1 >= 183.0 && y0 <= -105.0 && y1 >= 15.0);
    assert!(x1 - x0 < 200.0);
}

#[test]
fn zoom_on_a_field_holds_its_polygon() {
    let map = default_map();
    for (id, field) in &map.fields {
        let pic = render(&busy_scene(&map, View::Zoom(Region::Field(id.clone()))));
        let [x0, y0, x1, y1] = pic.view_box;
        for p in &field.polygon {
            assert!(p.x > x0 && p.x < x1 && p.y > y0 && p.y < y1, "{id}: {p:?} outside {:?}", pic.view_box);
        }
        assert!(pic.m_per_px < 1.0, "{id}: {}", pic.m_per_px);
    }
}

#[test]
fn the_vehicle_pixel_has_the_vehicle_colour() {
    let map = default_map();
    let views = [View::Map, View::Zoom(Region::Around { what: Around::Vehicle, radius_m: Some(20.0) })];
    for view in views {
        let scene = busy_scene(&map, view);
        let raster = draw(&scene);
        let (x, y) = raster.pixel_of(scene.vehicle.pos());
        assert_eq!(raster.rgb(x as u32, y as u32), Some(canvas::palette::VEHICLE));
        let (w, _, rgb) = decode_rgb(&raster.encode().png);
        let at = (y as usize * w as usize + x as usize) * 3;
        assert_eq!(rgb[at..at + 3], canvas::palette::VEHICLE);
    }
}

#[test]
fn bad_views_are_named_and_render_the_whole_map() {
    let map = default_map();
    let cases = [
        (View::Zoom(Region::Field("F99".into())), "the map has no field \"F99\""),
        (View::Zoom(Region::Around { what: Around::Home, radius_m: Some(0.5) }), "radius_m must be between"),
        (View::Zoom(Region::Circle { x: f64::NAN, y: 0.0, radius_m: 50.0 }), "is not a finite point"),
    ];
    let whole = render(&busy_scene(&map, View::Map)).view_box;
    for (view, want) in cases {
        let scene = busy_scene(&map, view);
        let err = view_box(&scene).unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
        assert_eq!(render(&scene).view_box, whole);
    }
    let mut scene = busy_scene(&map, View::Zoom(Region::Around { what: Around::Site, radius_m: None }));
    scene.site = None;
    assert!(matches!(view_box(&scene), Err(PictureError::NoSite)));
}

#[test]
fn pictures_carry_their_metadata() {
    let map = default_map();
    let pic = render(&busy_scene(&map, View::Zoom(Region::Field("F53".into()))));
    let reader = png::Decoder::new(pic.png.as_slice()).read_info().unwrap();
    let texts: Vec<(String, String)> =
        reader.info().uncompressed_latin1_text.iter().map(|t| (t.keyword.clone(), t.text.clone())).collect();
    let get = |k: &str| texts.iter().find(|t| t.0 == k).map(|t| t.1.clone()).unwrap();
    assert_eq!(get("acres-frame"), "f0007");
    assert_eq!(get("acres-view"), "zoom F53");
    let vb: Vec<f64> = get("acres-view-box").split(' ').map(|v| v.parse().unwrap()).collect();
    assert_eq!(vb, pic.view_box);
}

#[test]
fn compare_is_640_by_692_and_shows_both_pictures() {
    let map = default_map();
    let a = render(&busy_scene(&map, View::Map));
    let b = render(&busy_scene(&map, View::Zoom(Region::Field("F53".into()))));
    let out = compare(&a.png, "f0007 map", &b.png, "f0008 F53").unwrap();
    let (w, h, rgb) = decode_rgb(&out);
    assert_eq!((w, h), (WIDTH, HEIGHT));
    // The left panel shows a's vehicle where a had it, at half size.
    let raster = draw(&busy_scene(&map, View::Map));
    let (x, y) = raster.pixel_of(Vec2::new(200.0, 0.0));
    let (px, py) = (x as usize / 2, (y as usize - 52) / 2 + 92);
    let c = &rgb[(py * w as usize + px) * 3..][..3];
    assert!(c[0] > 150 && c[1] > 100 && c[2] < 120, "{c:?} at {px},{py}");
    // A foreign PNG (any size, with alpha) is fitted into its panel.
    let mut tiny = Vec::new();
    let mut enc = png::Encoder::new(&mut tiny, 3, 2);
    enc.set_color(png::ColorType::Rgba);
    enc.write_header().unwrap().write_image_data(&[200; 24]).unwrap();
    let out = compare(&tiny, "tiny", &a.png, "f0007").unwrap();
    assert_eq!(decode_rgb(&out).0, WIDTH);
}

#[test]
fn compare_refuses_what_is_not_a_png() {
    let map = default_map();
    let a = render(&busy_scene(&map, View::Map));
    let err = compare(&a.png, "f0001", b"not a png", "f0002").unwrap_err();
    assert!(matches!(&err, PictureError::BadPng { which, .. } if which == "f0002"), "{err}");
    let cut = &a.png[..a.png.len() / 2];
    assert!(matches!(compare(cut, "half", &a.png, "f0001"), Err(PictureError::BadPng { .. })));
}

#[test]
fn tidy_scales_and_steps() {
    assert_eq!(view::nice_ceil(2.41), 2.5);
    assert_eq!(view::nice_ceil(0.2025), 0.25);
    assert_eq!(view::nice_ceil(9.0), 10.0);
    assert_eq!(view::step_ceil(160.0), 200.0);
    assert_eq!(view::step_ceil(0.3), 0.5);
    assert_eq!(view::fmt_num(2.5), "2.5");
    assert_eq!(view::fmt_num(-200.0), "-200");
}

/// The busy scene's map view with an inset on the returns west of the truck.
fn inset_scene(map: &Map) -> Scene<'_> {
    let mut s = busy_scene(map, View::Map);
    // Returns clear of the truck's box (drawn over them), 10 m long.
    s.returns = (0..50).map(|k| Vec2::new(285.0 + k as f64 * 0.2, -4.0)).collect();
    s.inset = Some(Inset {
        centre: Vec2::new(295.0, -1.0),
        span_m: 40.0,
        m_per_px: INSET_M_PER_PX,
        title: "inset: returns on route".into(),
    });
    s
}

#[test]
fn a_map_with_an_inset_fills_the_frame_and_shows_the_returns_at_half_a_metre() {
    let map = default_map();
    let plain = draw(&busy_scene(&map, View::Map));
    let raster = draw(&inset_scene(&map));
    assert!(plain.inset().is_none());
    assert!(plain.map_fraction(&map) < 0.5, "without an inset: {}", plain.map_fraction(&map));
    assert!(raster.map_fraction(&map) >= 0.85, "with an inset: {}", raster.map_fraction(&map));
    // The map part still holds the whole map at the band's scale.
    let [x0, y0, x1, y1] = raster.view_box();
    let (lo, hi) = map.bounds();
    assert!(x0 < lo.x - map.home_radius_m && y0 < lo.y && x1 > hi.x && y1 > hi.y, "{:?}", raster.view_box());
    assert_eq!(raster.m_per_px(), plain.m_per_px());
    let (ivb, impp) = raster.inset().unwrap();
    assert_eq!(impp, INSET_M_PER_PX);
    assert!(ivb[0] <= 275.0 && ivb[2] >= 315.0 && ivb[1] <= -21.0 && ivb[3] >= 19.0, "{ivb:?}");
    // Every return of the scene is a magenta pixel of the inset, several pixels each.
    let magenta = |c: [u8; 3]| c[0] > 150 && c[1] < 90 && c[2] > 150;
    let (l, t) = raster.inset_pixel_of(Vec2::new(ivb[0] + 0.01, ivb[3] - 0.01)).unwrap();
    let (r, b) = raster.inset_pixel_of(Vec2::new(ivb[2] - 0.01, ivb[1] + 0.01)).unwrap();
    let count = (t..=b)
        .flat_map(|y| (l..=r).map(move |x| (x, y)))
        .filter(|&(x, y)| raster.rgb(x as u32, y as u32).is_some_and(magenta))
        .count();
    assert!(count >= 40, "{count} magenta pixels in the inset");
    let on_map = (52..692u32)
        .flat_map(|y| (0..640u32).map(move |x| (x, y)))
        .filter(|&(x, y)| (y as i64) < t && raster.rgb(x, y).is_some_and(magenta))
        .count();
    assert!(count > 4 * on_map, "the inset shows the returns larger: {count} against {on_map} on the map");
    // The vehicle (200, 0) is in the inset too, in its colour; a point off the inset is not.
    let (x, y) = raster.inset_pixel_of(Vec2::new(200.0, 0.0)).unwrap();
    assert_eq!(raster.rgb(x as u32, y as u32), Some(canvas::palette::VEHICLE));
    assert!(raster.inset_pixel_of(Vec2::new(1000.0, 0.0)).is_none());
}

#[test]
fn an_inset_is_drawn_only_on_the_map_view_and_keeps_pictures_deterministic() {
    let map = default_map();
    let mut zoom = inset_scene(&map);
    zoom.view = View::Zoom(Region::Field("F53".into()));
    let mut plain_zoom = busy_scene(&map, View::Zoom(Region::Field("F53".into())));
    plain_zoom.inset = None;
    assert_eq!(render(&zoom), render(&plain_zoom));
    assert_eq!(render(&inset_scene(&map)), render(&inset_scene(&map)));
    let pic = render(&inset_scene(&map));
    let reader = png::Decoder::new(pic.png.as_slice()).read_info().unwrap();
    let keys: Vec<String> =
        reader.info().uncompressed_latin1_text.iter().map(|t| t.keyword.clone()).collect();
    for k in ["acres-inset", "acres-inset-view-box", "acres-inset-m-per-px", "acres-inset-px"] {
        assert!(keys.iter().any(|x| x == k), "{k} missing in {keys:?}");
    }
    // compare still reads a map with an inset as a map (its map part, at half size).
    let out = compare(&render(&inset_scene(&map)).png, "f1", &render(&busy_scene(&map, View::Map)).png, "f2");
    assert_eq!(decode_rgb(&out.unwrap()).1, HEIGHT);
}
