//! The map layers of a picture, bottom to top: corridor, fields, Scout loops, lane nodes, home,
//! plan, route, driven path, LiDAR returns, blocked places, sensed objects, labels, vehicle and
//! the highlighted place.
//!
//! Small things keep a minimum size in pixels so that they stay visible at map scale: the vehicle
//! is at least 16 px long, a blocked cell at least 3 px, a return 2 px (more at finer scales: see [`sensed`]).

use acres_farm::geom::{Obb, Pose, Vec2};
use acres_farm::HOME;
use tiny_skia::{PathBuilder, Pixmap};

use super::canvas::{self, fill_with, palette as pal, push_polygon, push_polyline, stroke, stroke_with};
use super::text::{self, Anchor, BoxPx};
use super::view::{centroid, clip_polygon, Viewport};
use super::Scene;

/// How a field is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldState {
    Other,
    InPlay,
    Scouted,
}

fn field_state(scene: &Scene, id: &str) -> FieldState {
    if scene.scouted.iter().any(|s| s == id) {
        FieldState::Scouted
    } else if scene.fields_in_play.iter().any(|s| s == id) {
        FieldState::InPlay
    } else {
        FieldState::Other
    }
}

/// The map area grown by `margin` px, as `(left, top, right, bottom)`.
fn grown(vp: &Viewport, margin: f32) -> (f32, f32, f32, f32) {
    let (l, t, r, b) = vp.rect_px();
    (l - margin, t - margin, r + margin, b + margin)
}

/// Lanes as bands of the lane width, the margins around fields and the home yard.
pub(crate) fn corridor(pix: &mut Pixmap, vp: &Viewport, scene: &Scene) {
    let map = scene.map;
    let lane_px = vp.len_px(map.lane_width_m).max(2.0);
    let mut pb = PathBuilder::new();
    for lane in &map.lanes {
        push_polyline(&mut pb, vp, &[map.nodes[&lane.from], map.nodes[&lane.to]], false, lane_px);
    }
    stroke_with(pix, pb, pal::CORRIDOR, 1.0, &stroke(lane_px, None));
    let margin_px = vp.len_px(2.0 * map.field_margin_m).max(2.0);
    let mut pb = PathBuilder::new();
    for f in map.fields.values() {
        push_polyline(&mut pb, vp, &f.polygon, true, margin_px);
    }
    stroke_with(pix, pb, pal::CORRIDOR, 1.0, &stroke(margin_px, None));
    let (hx, hy) = vp.px(map.home());
    let mut pb = PathBuilder::new();
    pb.push_circle(hx, hy, vp.len_px(map.home_radius_m).max(3.0));
    fill_with(pix, pb, pal::CORRIDOR, 1.0);
}

/// Every field filled by its state and outlined, then the Scout loops as thin dashes.
pub(crate) fn fields(pix: &mut Pixmap, vp: &Viewport, scene: &Scene) {
    let clip = grown(vp, 4.0);
    for f in scene.map.fields.values() {
        let (fill, edge, width) = match field_state(scene, &f.id) {
            FieldState::Other => (pal::FIELD_OTHER, pal::FIELD_OTHER_EDGE, 1.0),
            FieldState::InPlay => (pal::FIELD_PLAY, pal::FIELD_PLAY_EDGE, 1.6),
            FieldState::Scouted => (pal::FIELD_SCOUTED, pal::FIELD_SCOUTED_EDGE, 1.6),
        };
        let poly: Vec<(f32, f32)> = f.polygon.iter().map(|p| vp.px(*p)).collect();
        let visible = clip_polygon(&poly, clip);
        if visible.len() < 3 {
            continue;
        }
        let mut pb = PathBuilder::new();
        push_polygon(&mut pb, &visible);
        fill_with(pix, pb, fill, 1.0);
        let mut pb = PathBuilder::new();
        push_polyline(&mut pb, vp, &f.polygon, true, 8.0);
        stroke_with(pix, pb, edge, 1.0, &stroke(width, None));
    }
    let dash = stroke(1.0, Some(&[4.0, 3.0]));
    for f in scene.map.fields.values() {
        let alpha = if field_state(scene, &f.id) == FieldState::Other { 0.45 } else { 0.9 };
        let mut pb = PathBuilder::new();
        push_polyline(&mut pb, vp, &f.scout_loop, true, 4.0);
        stroke_with(pix, pb, pal::LOOP, alpha, &dash);
    }
}

/// Lane nodes as small dots, with their names when the scale leaves room.
pub(crate) fn nodes(pix: &mut Pixmap, vp: &Viewport, scene: &Scene) {
    let (l, t, r, b) = vp.rect_px();
    let mut pb = PathBuilder::new();
    let mut names = Vec::new();
    for (id, p) in &scene.map.nodes {
        let (x, y) = vp.px(*p);
        if id == HOME || x < l || x > r || y < t || y > b {
            continue;
        }
        pb.push_circle(x, y, 2.0);
        names.push((x, y, id.as_str()));
    }
    fill_with(pix, pb, pal::NODE, 1.0);
    for (x, y, id) in names {
        text::draw(pix, x.round() as i32 + 3, y.round() as i32 + 3, id, 1, pal::MUTED);
    }
}

/// Home: a house symbol and the letter H; returns the box they cover.
pub(crate) fn home(pix: &mut Pixmap, vp: &Viewport, scene: &Scene) -> BoxPx {
    let (x, y) = vp.px(scene.map.home());
    let mut pb = PathBuilder::new();
    push_polygon(
        &mut pb,
        &[(x - 6.0, y + 6.0), (x - 6.0, y - 1.0), (x, y - 7.0), (x + 6.0, y - 1.0), (x + 6.0, y + 6.0)],
    );
    fill_with(pix, pb.clone(), pal::HOME, 1.0);
    stroke_with(pix, pb, pal::INK, 1.0, &stroke(1.0, None));
    canvas::fill_rect(pix, x - 1.5, y + 1.0, x + 1.5, y + 6.0, pal::BAND, 1.0);
    let bx = text::label(pix, x + 10.0, y, Anchor::MidLeft, HOME, 1, pal::HOME);
    (x as i32 - 8, y as i32 - 9, bx.2, y as i32 + 8)
}

/// The accepted plan (orange dashes), the route (blue) and the driven path (dark line).
pub(crate) fn paths(pix: &mut Pixmap, vp: &Viewport, scene: &Scene) {
    let mut pb = PathBuilder::new();
    for leg in &scene.plan {
        push_polyline(&mut pb, vp, leg, false, 8.0);
    }
    stroke_with(pix, pb, pal::PLAN, 1.0, &stroke(2.5, Some(&[7.0, 4.0])));
    let mut pb = PathBuilder::new();
    push_polyline(&mut pb, vp, &scene.route, false, 8.0);
    stroke_with(pix, pb, pal::ROUTE, 0.9, &stroke(3.0, None));
    let mut pb = PathBuilder::new();
    push_polyline(&mut pb, vp, &scene.driven, false, 8.0);
    stroke_with(pix, pb, pal::DRIVEN, 1.0, &stroke(1.6, None));
}

/// Adds a square of side `side` px around each visible point to a path.
fn push_squares(pb: &mut PathBuilder, vp: &Viewport, pts: &[Vec2], side: f32) {
    let (l, t, r, b) = grown(vp, side);
    let h = side / 2.0;
    for p in pts {
        let (x, y) = vp.px(*p);
        if x >= l && x <= r && y >= t && y <= b {
            if let Some(rect) = tiny_skia::Rect::from_ltrb(x - h, y - h, x + h, y + h) {
                pb.push_rect(rect);
            }
        }
    }
}

/// LiDAR returns as magenta dots and blocked 1 m cells as red squares. A return is 0.3 m, and at
/// least 2 px (3 px at 1 m/px and finer, 4 px at 0.5 m/px and finer, so that the returns of a zoom
/// or an inset read as a surface). Where a cell is 4 px or more, it is a red outline under the
/// returns it was made from; else a filled square over them.
pub(crate) fn sensed(pix: &mut Pixmap, vp: &Viewport, scene: &Scene) {
    let least_px = if vp.m_per_px <= 0.5 {
        4.0
    } else if vp.m_per_px <= 1.0 {
        3.0
    } else {
        2.0
    };
    let cell_px = vp.len_px(1.0).max(3.0);
    let mut cells = PathBuilder::new();
    push_squares(&mut cells, vp, &scene.blocked, cell_px);
    if cell_px >= 4.0 {
        stroke_with(pix, cells.clone(), pal::BLOCKED, 1.0, &stroke(1.5, None));
    }
    let mut pb = PathBuilder::new();
    push_squares(&mut pb, vp, &scene.returns, vp.len_px(0.3).clamp(least_px, least_px.max(4.0)));
    fill_with(pix, pb, pal::RETURNS, 1.0);
    if cell_px < 4.0 {
        fill_with(pix, cells, pal::BLOCKED, 1.0);
    }
}

/// The corners of a box in image pixels, grown about its centre to at least `min_len` ×
/// `min_wid` px.
fn box_px(vp: &Viewport, b: &Obb, min_len: f32, min_wid: f32) -> [(f32, f32); 4] {
    let len = vp.len_px(2.0 * b.half_length_m).max(min_len);
    let wid = vp.len_px(2.0 * b.half_width_m).max(min_wid);
    let (cx, cy) = vp.px(b.center);
    let (s, c) = (b.yaw as f32).sin_cos();
    // Image y points south, so the heading (c, s) in the map is (c, -s) in the image.
    let (fx, fy) = (c * len / 2.0, -s * len / 2.0);
    let (lx, ly) = (-s * wid / 2.0, -c * wid / 2.0);
    [
        (cx + fx + lx, cy + fy + ly),
        (cx - fx + lx, cy - fy + ly),
        (cx - fx - lx, cy - fy - ly),
        (cx + fx - lx, cy + fy - ly),
    ]
}

/// Sensed objects as purple boxes.
pub(crate) fn objects(pix: &mut Pixmap, vp: &Viewport, scene: &Scene) {
    for (_, b) in &scene.objects {
        let mut pb = PathBuilder::new();
        push_polygon(&mut pb, &box_px(vp, b, 5.0, 4.0));
        fill_with(pix, pb.clone(), pal::OBJECT, 0.5);
        stroke_with(pix, pb, pal::OBJECT, 1.0, &stroke(1.5, None));
    }
}

/// Field names (with "scouted" and a check mark), object kinds and the highlight's text.
pub(crate) fn labels(pix: &mut Pixmap, vp: &Viewport, scene: &Scene) {
    let inner = grown(vp, -6.0);
    for f in scene.map.fields.values() {
        let poly: Vec<(f32, f32)> = f.polygon.iter().map(|p| vp.px(*p)).collect();
        let visible = clip_polygon(&poly, inner);
        if visible.len() < 3 {
            continue;
        }
        let (x, y) = centroid(&visible);
        let wide = visible.iter().fold((f32::MAX, f32::MIN), |a, p| (a.0.min(p.0), a.1.max(p.0)));
        let scale = if wide.1 - wide.0 >= 150.0 { 2 } else { 1 };
        let state = field_state(scene, &f.id);
        let color = match state {
            FieldState::Other => pal::MUTED,
            FieldState::InPlay => pal::FIELD_PLAY_EDGE,
            FieldState::Scouted => pal::FIELD_SCOUTED_EDGE,
        };
        if state != FieldState::Scouted {
            text::label(pix, x, y, Anchor::Centre, &f.id, scale, color);
            continue;
        }
        let h = (text::GLYPH_PX * scale) as f32;
        text::label(pix, x, y - 2.0 - h, Anchor::TopCentre, &f.id, scale, color);
        let bx = text::label(pix, x, y + 3.0, Anchor::TopCentre, "  scouted", 1, color);
        let (cx, cy) = (bx.0 as f32 + 3.0, bx.1 as f32 + 2.0);
        let mut pb = PathBuilder::new();
        pb.move_to(cx, cy + 4.0);
        pb.line_to(cx + 3.0, cy + 7.0);
        pb.line_to(cx + 9.0, cy);
        stroke_with(pix, pb, color, 1.0, &stroke(2.0, None));
    }
    for (kind, b) in &scene.objects {
        let corners = box_px(vp, b, 5.0, 4.0);
        let right = corners.iter().map(|c| c.0).fold(f32::MIN, f32::max);
        let top = corners.iter().map(|c| c.1).fold(f32::MAX, f32::min);
        text::label(pix, right + 4.0, top - 4.0, Anchor::TopLeft, kind.as_str(), 1, pal::OBJECT);
    }
}

/// The vehicle: an oriented 5.0 × 2.4 m box (at least 16 × 8 px) with a black nose and a white
/// halo; returns the box it covers.
pub(crate) fn vehicle(pix: &mut Pixmap, vp: &Viewport, pose: &Pose) -> BoxPx {
    let body = Obb { center: pose.pos(), yaw: pose.yaw, half_length_m: 2.5, half_width_m: 1.2 };
    let c = box_px(vp, &body, 16.0, 8.0);
    let mut pb = PathBuilder::new();
    push_polygon(&mut pb, &c);
    stroke_with(pix, pb.clone(), pal::BAND, 0.9, &stroke(5.0, None));
    fill_with(pix, pb.clone(), pal::VEHICLE, 1.0);
    stroke_with(pix, pb, pal::INK, 1.0, &stroke(1.4, None));
    // The nose: a triangle over the front third, its tip at the middle of the front edge.
    let mid = |a: (f32, f32), b: (f32, f32), t: f32| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
    let tip = mid(c[0], c[3], 0.5);
    let (bl, br) = (mid(c[0], c[1], 0.4), mid(c[3], c[2], 0.4));
    let mut pb = PathBuilder::new();
    push_polygon(&mut pb, &[tip, mid(bl, br, 0.2), mid(bl, br, 0.8)]);
    fill_with(pix, pb, pal::INK, 1.0);
    let xs = c.iter().map(|p| p.0);
    let ys = c.iter().map(|p| p.1);
    let (l, r) = (xs.clone().fold(f32::MAX, f32::min), xs.fold(f32::MIN, f32::max));
    let (t, b) = (ys.clone().fold(f32::MAX, f32::min), ys.fold(f32::MIN, f32::max));
    (l as i32 - 3, t as i32 - 3, r as i32 + 3, b as i32 + 3)
}

/// The highlighted place: a red ring with a cross and its text; returns the ring's box.
pub(crate) fn highlight(pix: &mut Pixmap, vp: &Viewport, place: Vec2, what: &str) -> BoxPx {
    let (x, y) = vp.px(place);
    let r = vp.len_px(4.0).max(11.0);
    let mut pb = PathBuilder::new();
    pb.push_circle(x, y, r);
    stroke_with(pix, pb, pal::BAND, 0.8, &stroke(4.5, None));
    let mut pb = PathBuilder::new();
    pb.push_circle(x, y, r);
    pb.move_to(x - 4.0, y - 4.0);
    pb.line_to(x + 4.0, y + 4.0);
    pb.move_to(x - 4.0, y + 4.0);
    pb.line_to(x + 4.0, y - 4.0);
    stroke_with(pix, pb, pal::HIGHLIGHT, 1.0, &stroke(2.2, None));
    if !what.is_empty() {
        let (_, _, right, _) = vp.rect_px();
        let w = text::width_px(what, 1) as f32;
        if x + r + 6.0 + w <= right - 4.0 {
            text::label(pix, x + r + 6.0, y, Anchor::MidLeft, what, 1, pal::HIGHLIGHT);
        } else {
            text::label(pix, x - r - 6.0 - w, y, Anchor::MidLeft, what, 1, pal::HIGHLIGHT);
        }
    }
    let (l, t) = ((x - r) as i32 - 3, (y - r) as i32 - 3);
    (l, t, (x + r) as i32 + 3, (y + r) as i32 + 3)
}
