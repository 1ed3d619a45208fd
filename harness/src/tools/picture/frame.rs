//! The frame around the map area (grid, ticks, coordinate labels, north arrow, border) and the
//! band above it (title, scale bar, legend).
//!
//! Tick labels read `x=400` along the bottom edge and `y=200` along the left edge, in metres, on
//! light boxes. Grid lines are 1, 2 or 5 times a power of ten metres apart, at least 80 px.

use acres_farm::geom::Vec2;
use tiny_skia::{PathBuilder, Pixmap};

use super::canvas::{fill_rect, fill_with, palette as pal, push_polygon, stroke, stroke_with, Rgb};
use super::text::{self, overlaps, Anchor, BoxPx};
use super::view::{fmt_num, step_ceil, Viewport};

/// Height of the band with the title and the legend, px.
pub(crate) const BAND_PX: u32 = 52;

/// The grid step for a scale: at least 80 px between lines.
pub(crate) fn grid_step_m(vp: &Viewport) -> f64 {
    step_ceil(80.0 * vp.m_per_px)
}

/// The multiples of `step` in `[lo, hi]`.
fn multiples(lo: f64, hi: f64, step: f64) -> impl Iterator<Item = f64> {
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(move |k| k as f64 * step)
}

/// The grid lines of a viewport: image columns with their x, image rows with their y.
#[allow(clippy::type_complexity)]
fn lines(vp: &Viewport, step: f64) -> (Vec<(f32, f64)>, Vec<(f32, f64)>) {
    let [x0, y0, x1, y1] = vp.view_box();
    let xs = multiples(x0, x1, step).map(|x| (vp.px(Vec2::new(x, y0)).0.round() + 0.5, x)).collect();
    let ys = multiples(y0, y1, step).map(|y| (vp.px(Vec2::new(x0, y)).1.round() + 0.5, y)).collect();
    (xs, ys)
}

/// Faint grid lines under the map.
pub(crate) fn grid(pix: &mut Pixmap, vp: &Viewport) {
    let (l, t, r, b) = vp.rect_px();
    let (xs, ys) = lines(vp, grid_step_m(vp));
    let mut pb = PathBuilder::new();
    for (px, _) in xs {
        pb.move_to(px, t);
        pb.line_to(px, b);
    }
    for (py, _) in ys {
        pb.move_to(l, py);
        pb.line_to(r, py);
    }
    stroke_with(pix, pb, pal::GRID, 0.09, &stroke(1.0, None));
}

/// One coordinate label of the frame.
pub(crate) struct TickLabel {
    /// The text, e.g. `x=400`.
    pub text: String,
    /// The text's top-left corner, px.
    pub at: (i32, i32),
    /// The light box under it.
    pub bx: BoxPx,
}

/// The coordinate labels of a viewport with grid step `step`: `y=…` along the left edge, `x=…`
/// along the bottom edge. A label that would cover a box of `keep_out` or another label is left
/// out.
pub(crate) fn tick_labels(vp: &Viewport, step: f64, keep_out: &[BoxPx]) -> Vec<TickLabel> {
    let (l, t, r, b) = vp.rect_px();
    let (xs, ys) = lines(vp, step);
    let mut out: Vec<TickLabel> = Vec::new();
    let push = |text: String, (at, bx): ((i32, i32), BoxPx), out: &mut Vec<TickLabel>| {
        let inside = bx.0 >= l as i32 && bx.2 < r as i32 && bx.1 >= t as i32 && bx.3 < b as i32;
        let free = !keep_out.iter().chain(out.iter().map(|o| &o.bx)).any(|k| overlaps(*k, bx, 3));
        if inside && free {
            out.push(TickLabel { text, at, bx });
        }
    };
    // Keep the top-right corner free for the north arrow, the bottom-left one for the x labels.
    out.push(TickLabel { text: String::new(), at: (0, 0), bx: north_box(r, t) });
    for (py, y) in ys {
        if py < b - 20.0 {
            let text = format!("y={}", fmt_num(y));
            let place = text::label_place(l + 9.0, py, Anchor::MidLeft, &text, 1);
            push(text, place, &mut out);
        }
    }
    for (px, x) in xs {
        let text = format!("x={}", fmt_num(x));
        let place = text::label_place(px, b - 17.0, Anchor::TopCentre, &text, 1);
        push(text, place, &mut out);
    }
    out.remove(0);
    out
}

/// The box of the north arrow in the top-right corner of a map area.
fn north_box(r: f32, t: f32) -> BoxPx {
    (r as i32 - 30, t as i32 + 8, r as i32 - 10, t as i32 + 40)
}

/// Tick marks on all four edges, coordinate labels on the bottom and left edges (not over the
/// boxes of `keep_out`), a north arrow in the top-right corner and the border.
pub(crate) fn frame(pix: &mut Pixmap, vp: &Viewport, step: f64, keep_out: &[BoxPx]) {
    let (l, t, r, b) = vp.rect_px();
    let (xs, ys) = lines(vp, step);
    let mut pb = PathBuilder::new();
    for (px, _) in xs {
        pb.move_to(px, t);
        pb.line_to(px, t + 6.0);
        pb.move_to(px, b);
        pb.line_to(px, b - 6.0);
    }
    for (py, _) in ys {
        pb.move_to(l, py);
        pb.line_to(l + 6.0, py);
        pb.move_to(r, py);
        pb.line_to(r - 6.0, py);
    }
    stroke_with(pix, pb, pal::INK, 1.0, &stroke(1.0, None));
    for lab in tick_labels(vp, step, keep_out) {
        text::light_box(pix, lab.bx);
        text::draw(pix, lab.at.0, lab.at.1, &lab.text, 1, pal::INK);
    }
    let nb = north_box(r, t);
    north_arrow(pix, nb);
    let mut pb = PathBuilder::new();
    pb.move_to(l + 0.5, t + 0.5);
    pb.line_to(r - 0.5, t + 0.5);
    pb.line_to(r - 0.5, b - 0.5);
    pb.line_to(l + 0.5, b - 0.5);
    pb.close();
    stroke_with(pix, pb, pal::INK, 1.0, &stroke(1.0, None));
}

/// The boxes that a picture's frame covers with light boxes: every coordinate label it may draw
/// and the north arrow.
pub(crate) fn frame_boxes(vp: &Viewport) -> Vec<BoxPx> {
    let (_, t, r, _) = vp.rect_px();
    let mut out: Vec<BoxPx> = tick_labels(vp, grid_step_m(vp), &[]).into_iter().map(|l| l.bx).collect();
    out.push(north_box(r, t));
    out
}

/// A north arrow with the letter N in the box `nb`.
fn north_arrow(pix: &mut Pixmap, nb: BoxPx) {
    text::light_box(pix, nb);
    let (x, y) = (nb.0 as f32 + 10.0, nb.1 as f32 + 2.0);
    text::draw(pix, x as i32 - 3, y as i32, "N", 1, pal::INK);
    let mut pb = PathBuilder::new();
    push_polygon(&mut pb, &[(x, y + 10.0), (x + 5.0, y + 20.0), (x, y + 17.0), (x - 5.0, y + 20.0)]);
    fill_with(pix, pb, pal::INK, 1.0);
    let mut pb = PathBuilder::new();
    pb.move_to(x, y + 17.0);
    pb.line_to(x, y + 28.0);
    stroke_with(pix, pb, pal::INK, 1.0, &stroke(1.5, None));
}

/// A scale bar `len_m` long ending at `right`, its top at `top`: four black and white blocks
/// with `0` and the length above them.
pub(crate) fn scale_bar(pix: &mut Pixmap, vp: &Viewport, right: f32, top: f32) -> f32 {
    let len_m = step_ceil(60.0 * vp.m_per_px);
    let len = vp.len_px(len_m).round();
    let left = right - len;
    let by = top + 11.0;
    for k in 0..4 {
        let (a, b) = (left + len * k as f32 / 4.0, left + len * (k + 1) as f32 / 4.0);
        let c = if k % 2 == 0 { pal::INK } else { pal::BAND };
        fill_rect(pix, a, by, b, by + 5.0, c, 1.0);
    }
    let mut pb = PathBuilder::new();
    if let Some(rect) = tiny_skia::Rect::from_ltrb(left + 0.5, by + 0.5, right - 0.5, by + 5.5) {
        pb.push_rect(rect);
    }
    stroke_with(pix, pb, pal::INK, 1.0, &stroke(1.0, None));
    text::draw(pix, left as i32 - 3, top as i32, "0", 1, pal::INK);
    let s = format!("{} m", fmt_num(len_m));
    text::draw(pix, right as i32 - text::width_px(&s, 1) + 4, top as i32, &s, 1, pal::INK);
    left
}

/// One legend entry: a small symbol and its word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    InPlay,
    Scouted,
    Field,
    Lane,
    Loop,
    Route,
    Plan,
    Driven,
    Vehicle,
    Blocked,
    Lidar,
    Object,
    Marked,
}

impl Key {
    const ALL: [Key; 13] = [
        Key::InPlay,
        Key::Scouted,
        Key::Field,
        Key::Lane,
        Key::Loop,
        Key::Route,
        Key::Plan,
        Key::Driven,
        Key::Vehicle,
        Key::Blocked,
        Key::Lidar,
        Key::Object,
        Key::Marked,
    ];

    fn word(self) -> &'static str {
        match self {
            Key::InPlay => "in play",
            Key::Scouted => "scouted",
            Key::Field => "field",
            Key::Lane => "lane",
            Key::Loop => "loop",
            Key::Route => "route",
            Key::Plan => "plan",
            Key::Driven => "driven",
            Key::Vehicle => "vehicle",
            Key::Blocked => "blocked",
            Key::Lidar => "LiDAR",
            Key::Object => "object",
            Key::Marked => "marked",
        }
    }

    /// Draws the symbol in the 16 × 10 px box at (`x`, `y`).
    fn symbol(self, pix: &mut Pixmap, x: f32, y: f32) {
        let swatch = |pix: &mut Pixmap, fill: Rgb, edge: Rgb| {
            fill_rect(pix, x, y, x + 16.0, y + 10.0, edge, 1.0);
            fill_rect(pix, x + 1.5, y + 1.5, x + 14.5, y + 8.5, fill, 1.0);
        };
        let line = |pix: &mut Pixmap, c: Rgb, w: f32, dash: Option<&[f32]>| {
            let mut pb = PathBuilder::new();
            pb.move_to(x, y + 5.0);
            pb.line_to(x + 16.0, y + 5.0);
            stroke_with(pix, pb, c, 1.0, &stroke(w, dash));
        };
        match self {
            Key::InPlay => swatch(pix, pal::FIELD_PLAY, pal::FIELD_PLAY_EDGE),
            Key::Scouted => swatch(pix, pal::FIELD_SCOUTED, pal::FIELD_SCOUTED_EDGE),
            Key::Field => swatch(pix, pal::FIELD_OTHER, pal::FIELD_OTHER_EDGE),
            Key::Lane => fill_rect(pix, x, y + 1.0, x + 16.0, y + 9.0, pal::CORRIDOR, 1.0),
            Key::Loop => line(pix, pal::LOOP, 1.0, Some(&[4.0, 3.0])),
            Key::Route => line(pix, pal::ROUTE, 3.0, None),
            Key::Plan => line(pix, pal::PLAN, 2.5, Some(&[6.0, 3.0])),
            Key::Driven => line(pix, pal::DRIVEN, 1.6, None),
            Key::Vehicle => {
                fill_rect(pix, x + 1.0, y + 2.0, x + 15.0, y + 9.0, pal::INK, 1.0);
                fill_rect(pix, x + 2.0, y + 3.0, x + 14.0, y + 8.0, pal::VEHICLE, 1.0);
                let mut pb = PathBuilder::new();
                push_polygon(&mut pb, &[(x + 15.0, y + 5.5), (x + 10.0, y + 3.0), (x + 10.0, y + 8.0)]);
                fill_with(pix, pb, pal::INK, 1.0);
            }
            Key::Blocked => fill_rect(pix, x + 4.0, y + 1.0, x + 12.0, y + 9.0, pal::BLOCKED, 1.0),
            Key::Lidar => {
                for (dx, dy) in [(2.0, 6.0), (6.0, 2.0), (9.0, 7.0), (13.0, 3.0)] {
                    fill_rect(pix, x + dx, y + dy, x + dx + 2.0, y + dy + 2.0, pal::RETURNS, 1.0);
                }
            }
            Key::Object => {
                fill_rect(pix, x + 2.0, y + 1.0, x + 14.0, y + 9.0, pal::OBJECT, 1.0);
                fill_rect(pix, x + 3.5, y + 2.5, x + 12.5, y + 7.5, pal::OBJECT, 0.5);
            }
            Key::Marked => {
                let mut pb = PathBuilder::new();
                pb.push_circle(x + 8.0, y + 5.0, 4.5);
                stroke_with(pix, pb, pal::HIGHLIGHT, 1.0, &stroke(2.0, None));
            }
        }
    }
}

/// Draws an inset on the rectangle of `vp`: `draw_area` draws the map area on a pixmap of the
/// inset's own (so that nothing spills over the map beside it) with the given boxes left free of
/// labels; then a title box in its top-left corner with `title`, the metres per pixel and a scale
/// bar, and a border that sets it apart from the map.
pub(crate) fn inset(
    pix: &mut Pixmap,
    vp: &Viewport,
    title: &str,
    draw_area: impl FnOnce(&mut Pixmap, &Viewport, &[BoxPx]),
) {
    let local = vp.at_origin();
    let Some(mut own) = Pixmap::new(vp.width_px as u32, vp.height_px as u32) else { return };
    let mpp = format!("{} m/px", fmt_num(vp.m_per_px));
    let bar_px = vp.len_px(step_ceil(60.0 * vp.m_per_px)).round() as i32;
    let scale_w = text::width_px(&mpp, 1) + 14 + bar_px;
    let bx: BoxPx = (4, 4, 12 + text::width_px(title, 1).max(scale_w), 44);
    draw_area(&mut own, &local, &[bx]);
    text::light_box(&mut own, bx);
    text::draw(&mut own, 8, 8, title, 1, pal::ROUTE);
    text::draw(&mut own, 8, 28, &mpp, 1, pal::MUTED);
    scale_bar(&mut own, &local, (8 + scale_w) as f32, 22.0);
    pix.draw_pixmap(
        vp.left_px as i32,
        vp.top_px as i32,
        own.as_ref(),
        &tiny_skia::PixmapPaint::default(),
        tiny_skia::Transform::identity(),
        None,
    );
    let (l, t, r, b) = vp.rect_px();
    fill_rect(pix, l, t - 1.0, r, t + 1.0, pal::INK, 1.0);
    fill_rect(pix, l - 1.0, t, l + 1.0, b, pal::INK, 1.0);
}

/// The band over the map: the title (frame, time, view) at 2×, the scale, the metres per pixel
/// and the legend in two rows at 1×.
pub(crate) fn band(pix: &mut Pixmap, vp: &Viewport, head: &str, view: &str) {
    let w = pix.width() as f32;
    fill_rect(pix, 0.0, 0.0, w, BAND_PX as f32, pal::BAND, 1.0);
    fill_rect(pix, 0.0, BAND_PX as f32 - 1.0, w, BAND_PX as f32, pal::INK, 1.0);
    let bar_left = scale_bar(pix, vp, w - 10.0, 3.0);
    let mpp = format!("{} m/px", fmt_num(vp.m_per_px));
    let mpp_x = bar_left as i32 - 14 - text::width_px(&mpp, 1);
    text::draw(pix, mpp_x, 9, &mpp, 1, pal::MUTED);
    // The title never runs into the scale: the view drops to 1x, then both are shortened.
    let room = |x: i32, scale: i32| ((mpp_x - 10 - x).max(0) / (text::GLYPH_PX * scale)) as usize;
    let head = text::fit(head, room(6, 2));
    text::draw(pix, 6, 4, &head, 2, pal::INK);
    let x = 6 + text::width_px(&head, 2) + 12;
    if text::width_px(view, 2) <= mpp_x - 10 - x {
        text::draw(pix, x, 4, view, 2, pal::ROUTE);
    } else {
        text::draw(pix, x, 8, &text::fit(view, room(x, 1)), 1, pal::ROUTE);
    }
    legend(pix, 6.0, 26.0, w - 4.0);
}

/// The legend from (`x0`, `y0`), wrapping at `right`, rows 13 px apart.
pub(crate) fn legend(pix: &mut Pixmap, x0: f32, y0: f32, right: f32) {
    let (mut x, mut y) = (x0, y0);
    for key in Key::ALL {
        let need = 16.0 + 4.0 + text::width_px(key.word(), 1) as f32;
        if x + need > right {
            x = x0;
            y += 13.0;
        }
        key.symbol(pix, x, y - 1.0);
        text::draw(pix, x as i32 + 20, y as i32, key.word(), 1, pal::INK);
        x += need + 12.0;
    }
}
