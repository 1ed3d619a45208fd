//! One video frame of 1920 × 1080: the viewer's parts in step, drawn with tiny-skia and the
//! picture code's 8 × 8 font.
//!
//! ```text
//! +--------------------------------------------------------------------------------+
//! | Head: scenario, title, mode/profile/model, instruction, end   t = …  speed x12  |
//! +------------------------------+-------------------------------------------------+
//! | World (the picture code's    | World state: time, vehicle, skill, planner      |
//! | drawing at the frame's time, | What the Planner Sees: the wake-up's picture,   |
//! | scaled to 838 × 906)         |   the message, the reads                        |
//! |                              | What the Planner Does: replies, tools, verdicts |
//! +------------------------------+-------------------------------------------------+
//! | Timeline: skills (result codes), thinking, wake-ups, events, the cursor        |
//! +--------------------------------------------------------------------------------+
//! ```
//!
//! The world is drawn by [`crate::tools::picture::draw`] from the scene of
//! [`WorldData::scene_at`](crate::review::source::WorldData::scene_at); [`find_vehicle`] finds
//! the drawn vehicle's pixels again, for the place error of the report.

use std::collections::HashMap;

use acres_farm::geom::Vec2;
use tiny_skia::{FilterQuality, Pixmap, PixmapPaint, Rect, Transform};

use crate::review::loaded::Loaded;
use crate::review::model::Timeline;
use crate::review::source::WorldView;
use crate::tools::picture;
use crate::tools::picture::canvas::{paint, palette, Rgb};
use crate::tools::picture::text::draw as text;
use crate::tools::picture::Raster;

/// The frame's width, px.
pub const WIDTH_PX: u32 = 1920;
/// The frame's height, px.
pub const HEIGHT_PX: u32 = 1080;
const HEAD_PX: f32 = 64.0;
const WORLD_X_PX: f32 = 8.0;
const WORLD_SCALE: f32 = 906.0 / picture::HEIGHT as f32;
const RIGHT_X_PX: i32 = 860;
const TIMELINE_Y_PX: f32 = 976.0;
const THINK: Rgb = [122, 63, 208];

/// What one worker needs to draw frames; it keeps the decoded wake-up pictures.
pub struct Drawer<'a> {
    /// The run.
    pub run: &'a Loaded,
    /// The world's view.
    pub view: WorldView,
    /// Whether the world is drawn (`--world none`: it is not).
    pub world: bool,
    /// The mission times the timeline spans (`--from`, `--to`), s.
    pub range_s: (f64, f64),
    frames: HashMap<String, Option<Pixmap>>,
    verdicts: HashMap<usize, Raster>,
}

/// The drawn vehicle found in a frame, and where the pose track puts it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlaceSample {
    /// The distance between the two, m.
    pub error_m: f64,
}

/// Fills a rectangle on whole pixels (no anti-aliasing: crisp bars, and tiny-skia's hairline
/// path is never taken).
fn rect(pix: &mut Pixmap, l: f32, t: f32, w: f32, h: f32, c: Rgb) {
    let (l, t) = (l.round(), t.round());
    if let Some(r) = Rect::from_xywh(l, t, w.round().max(1.0), h.round().max(1.0)) {
        let mut p = paint(c, 1.0);
        p.anti_alias = false;
        pix.fill_rect(r, &p, Transform::identity(), None);
    }
}

/// Splits text into lines of at most `n` characters (at spaces where it can), keeping newlines.
pub fn wrap(s: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for para in s.lines() {
        let mut line = String::new();
        for word in para.split(' ') {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > n {
                out.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
            while line.chars().count() > n {
                let rest: String = line.chars().skip(n).collect();
                out.push(line.chars().take(n).collect());
                line = rest;
            }
        }
        out.push(line);
    }
    out
}

/// Decodes one of the run's 8-bit PNG frames into a pixmap.
fn decode_png(bytes: &[u8]) -> Option<Pixmap> {
    let mut d = png::Decoder::new(bytes);
    d.set_transformations(png::Transformations::normalize_to_color8());
    let mut r = d.read_info().ok()?;
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).ok()?;
    let ch = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        _ => return None,
    };
    let mut rgba = Vec::with_capacity((info.width * info.height * 4) as usize);
    for row in buf.chunks(info.line_size).take(info.height as usize) {
        for px in row.chunks_exact(ch).take(info.width as usize) {
            rgba.extend_from_slice(&[px[0], px[1], px[2], 255]);
        }
    }
    Pixmap::from_vec(rgba, tiny_skia::IntSize::from_wh(info.width, info.height)?)
}

/// The centre of the drawn vehicle (its yellow body) in a world picture, in metres; `None` when
/// it is not wholly inside the map area.
pub fn find_vehicle(r: &Raster) -> Option<Vec2> {
    let vb = r.view_box();
    let (left, top) = r.pixel_of(Vec2::new(vb[0], vb[3]));
    let (right, bottom) = r.pixel_of(Vec2::new(vb[2], vb[1]));
    let pix = r.pixmap();
    let (w, data) = (pix.width() as i64, pix.data());
    let (mut x0, mut y0, mut x1, mut y1) = (i64::MAX, i64::MAX, i64::MIN, i64::MIN);
    for y in top.max(0)..bottom.min(pix.height() as i64) {
        for x in left.max(0)..right.min(w) {
            let i = ((y * w + x) * 4) as usize;
            let [red, g, b] = [data[i], data[i + 1], data[i + 2]];
            if red > 235 && (195..=235).contains(&g) && b < 60 {
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            }
        }
    }
    if x0 > x1 || x0 <= left || y0 <= top || x1 >= right - 1 || y1 >= bottom - 1 {
        return None;
    }
    let m = r.m_per_px();
    let cx = (x0 + x1 + 1) as f64 / 2.0 - left as f64;
    let cy = (y0 + y1 + 1) as f64 / 2.0 - top as f64;
    Some(Vec2::new(vb[0] + cx * m, vb[3] - cy * m))
}

impl<'a> Drawer<'a> {
    /// A drawer of the run's frames.
    pub fn new(run: &'a Loaded, view: WorldView, world: bool) -> Self {
        let range_s = (0.0, run.timeline.t_end_s);
        Drawer { run, view, world, range_s, frames: HashMap::new(), verdicts: HashMap::new() }
    }

    /// The timeline spans `from_s` to `to_s` (the video's `--from` and `--to`) instead of the
    /// whole run.
    pub fn range(mut self, from_s: f64, to_s: f64) -> Self {
        self.range_s = (from_s, to_s);
        self
    }

    fn tl(&self) -> &Timeline {
        &self.run.timeline
    }

    /// Draws the frame at mission time `t_s`; `rate` is the video's speed there.
    pub fn frame(&mut self, t_s: f64, rate: f64, thinking: bool) -> (Pixmap, Option<PlaceSample>) {
        let mut pix = Pixmap::new(WIDTH_PX, HEIGHT_PX).expect("1920 x 1080 is a valid pixmap size");
        pix.fill(tiny_skia::Color::from_rgba8(244, 242, 235, 255));
        self.head(&mut pix, t_s, rate, thinking);
        let sample = if self.world { self.world(&mut pix, t_s) } else { None };
        if !self.world {
            text(&mut pix, 40, 400, "world: none (--world none)", 2, palette::MUTED);
        }
        let y = self.state(&mut pix, t_s);
        let y = self.sees(&mut pix, t_s, y + 8);
        let refused = self.does(&mut pix, t_s, y + 8);
        if let Some(i) = refused {
            self.verdict(&mut pix, i, y + 8);
        }
        self.timeline(&mut pix, t_s);
        (pix, sample)
    }

    fn head(&self, pix: &mut Pixmap, t_s: f64, rate: f64, thinking: bool) {
        rect(pix, 0.0, 0.0, WIDTH_PX as f32, HEAD_PX, palette::BAND);
        let r = &self.run.log.run;
        text(
            pix,
            12,
            8,
            &crate::tools::picture::text::fit(&format!("{} - {}", r.scenario, r.title), 70),
            2,
            palette::INK,
        );
        let end = match &self.run.log.end {
            Some(e) => format!("end {} ({})", e.end, if e.success { "success" } else { "failed" }),
            None => "running".into(),
        };
        let line = format!(
            "mode {}  profile {}  model {}  world {}  {end}",
            r.mode.as_str(),
            r.profile.as_str(),
            r.model,
            r.world.as_str()
        );
        text(pix, 12, 30, &line, 1, palette::MUTED);
        text(
            pix,
            12,
            44,
            &crate::tools::picture::text::fit(&format!("\"{}\"", r.instruction), 130),
            1,
            palette::INK,
        );
        text(pix, 1380, 8, &format!("t = {t_s:.1} s"), 3, palette::INK);
        let speed = if thinking { format!("x{rate} THE MODEL THINKS") } else { format!("x{rate}") };
        text(pix, 1380, 40, &speed, 2, if thinking { THINK } else { palette::MUTED });
    }

    fn world(&self, pix: &mut Pixmap, t_s: f64) -> Option<PlaceSample> {
        let scene = self.run.world.scene_at(&self.run.map, self.tl(), t_s, self.view);
        let raster = crate::tools::picture::draw(&scene);
        let ts = Transform::from_row(WORLD_SCALE, 0.0, 0.0, WORLD_SCALE, WORLD_X_PX, HEAD_PX + 6.0);
        let paint = PixmapPaint { quality: FilterQuality::Bilinear, ..PixmapPaint::default() };
        pix.draw_pixmap(0, 0, raster.pixmap().as_ref(), &paint, ts, None);
        let drawn = find_vehicle(&raster)?;
        let truth = crate::review::source::pose_at(&self.run.world.track, t_s)?;
        Some(PlaceSample { error_m: drawn.dist(truth.pos()) })
    }

    /// The world state; returns the next free row, px.
    fn state(&self, pix: &mut Pixmap, t_s: f64) -> i32 {
        let x = RIGHT_X_PX;
        let mut y = HEAD_PX as i32 + 8;
        let source = format!("WORLD  (no packaged game: drawn from {})", self.run.world.source);
        text(pix, x, y, &source, 2, palette::INK);
        y += 22;
        if let Some(p) = crate::review::source::pose_at(&self.run.world.track, t_s) {
            let line = format!(
                "world time {t_s:.1} s   vehicle x {:.1} m  y {:.1} m  heading {:.0} deg",
                p.x,
                p.y,
                p.yaw.to_degrees()
            );
            text(pix, x, y, &line, 1, palette::INK);
        }
        y += 12;
        let skill = match self.tl().skill_at(t_s) {
            Some(s) => {
                format!("skill {} {} since {:.1} s", s.skill, s.target.as_deref().unwrap_or(""), s.t0_s)
            }
            None => "skill none".into(),
        };
        text(pix, x, y, &skill, 1, palette::INK);
        y += 12;
        let planner = match self.tl().thinking_at(t_s) {
            Some(c) => format!("planner: THE MODEL THINKS (call {}, {:.1} s)", c.call, t_s - c.t0_s),
            None => "planner: waiting for a wake-up".into(),
        };
        text(pix, x, y, &planner, 1, if self.tl().thinking_at(t_s).is_some() { THINK } else { palette::INK });
        y + 12
    }

    fn sees(&mut self, pix: &mut Pixmap, t_s: f64, y0: i32) -> i32 {
        let x = RIGHT_X_PX;
        text(pix, x, y0, "WHAT THE PLANNER SEES", 2, palette::INK);
        let y = y0 + 22;
        let Some(w) = self.tl().wake_at(t_s).cloned() else {
            text(pix, x, y, "no wake-up yet", 1, palette::MUTED);
            return y + 420;
        };
        if let Some(f) = &w.frame_file {
            let folder = self.run.log.folder.clone();
            let img = self
                .frames
                .entry(f.clone())
                .or_insert_with(|| std::fs::read(folder.join(f)).ok().and_then(|b| decode_png(&b)));
            if let Some(img) = img {
                let s = 400.0 / picture::HEIGHT as f32;
                let ts = Transform::from_row(s, 0.0, 0.0, s, x as f32, y as f32);
                let paint = PixmapPaint { quality: FilterQuality::Bilinear, ..PixmapPaint::default() };
                pix.draw_pixmap(0, 0, img.as_ref(), &paint, ts, None);
            }
        }
        let tx = x + 380;
        let mut ty = y;
        text(
            pix,
            tx,
            ty,
            &format!("wake-up {} ({}) at {:.1} s", w.n, w.reason.as_str(), w.t_s),
            1,
            palette::INK,
        );
        ty += 14;
        for line in wrap(&w.message, 82).iter().take(14) {
            text(pix, tx, ty, line, 1, palette::MUTED);
            ty += 11;
        }
        for u in self.tl().tools.iter().filter(|u| u.wake == w.n && u.name == "read" && u.t_s <= t_s) {
            let s = format!("read {} -> {}", u.arguments, serde_json::Value::Object(u.result.clone()));
            for line in wrap(&s, 82).iter().take(4) {
                if ty < y + 396 {
                    text(pix, tx, ty, line, 1, palette::ROUTE);
                    ty += 11;
                }
            }
        }
        y + 404
    }

    /// The picture of refused verdict `i`, its place in red, at the right of the Does part.
    fn verdict(&mut self, pix: &mut Pixmap, i: usize, y0: i32) {
        let run = self.run;
        let Some(vd) = run.timeline.verdicts.get(i) else { return };
        let r = self.verdicts.entry(i).or_insert_with(|| crate::review::loaded::verdict_raster(run, vd));
        let s = 0.5;
        let x = WIDTH_PX as f32 - 8.0 - picture::WIDTH as f32 * s;
        let ts = Transform::from_row(s, 0.0, 0.0, s, x, y0 as f32);
        let paint = PixmapPaint { quality: FilterQuality::Bilinear, ..PixmapPaint::default() };
        pix.draw_pixmap(0, 0, r.pixmap().as_ref(), &paint, ts, None);
    }

    /// What the Planner Does; returns the index of a refused verdict of the wake-up shown, whose
    /// picture goes beside the text.
    fn does(&self, pix: &mut Pixmap, t_s: f64, y0: i32) -> Option<usize> {
        let x = RIGHT_X_PX;
        text(pix, x, y0, "WHAT THE PLANNER DOES", 2, palette::INK);
        let mut y = y0 + 22;
        if let Some(c) = self.tl().thinking_at(t_s) {
            rect(pix, x as f32, y as f32 - 2.0, 1040.0, 20.0, [239, 227, 255]);
            text(
                pix,
                x + 4,
                y,
                &format!("The Model Thinks... (call {}, asked at {:.1} s)", c.call, c.t0_s),
                2,
                THINK,
            );
            y += 24;
        }
        let w = self.tl().wake_at(t_s)?;
        let refused = self
            .tl()
            .verdicts
            .iter()
            .rev()
            .find(|v| !v.accepted && v.t_s >= w.t_s && v.t_s <= t_s)
            .map(|v| v.i);
        let cols = if refused.is_some() { 88 } else { 128 };
        let mut lines: Vec<(String, Rgb)> = Vec::new();
        let mut items: Vec<(f64, Vec<(String, Rgb)>)> = Vec::new();
        for c in self.tl().calls.iter().filter(|c| c.wake == w.n && c.t1_s.is_some_and(|t1| t1 <= t_s)) {
            let mut v = Vec::new();
            if let Some(r) = &c.reasoning {
                v.extend(wrap(&format!("reasoning: {r}"), cols).into_iter().map(|l| (l, palette::MUTED)));
            }
            if !c.text.is_empty() {
                v.extend(
                    wrap(&format!("call {}: {}", c.call, c.text), cols)
                        .into_iter()
                        .map(|l| (l, palette::INK)),
                );
            }
            items.push((c.t1_s.unwrap_or(c.t0_s), v));
        }
        for u in self.tl().tools.iter().filter(|u| u.wake == w.n && u.t_s <= t_s) {
            let s = format!("{} {} -> {}", u.name, u.arguments, serde_json::Value::Object(u.result.clone()));
            let c = if u.error { palette::BLOCKED } else { palette::ROUTE };
            items.push((u.t_s + 1e-6, wrap(&s, cols).into_iter().take(3).map(|l| (l, c)).collect()));
        }
        for v in self.tl().verdicts.iter().filter(|v| v.t_s >= w.t_s && v.t_s <= t_s) {
            let s = match v.accepted {
                true => format!("plan ACCEPTED {:?} home {}", v.visits, v.return_home),
                false => format!(
                    "plan REFUSED {:?}: {} - {}",
                    v.visits,
                    v.reason.as_deref().unwrap_or(""),
                    v.counterexample.as_deref().unwrap_or("")
                ),
            };
            let c = if v.accepted { palette::FIELD_PLAY_EDGE } else { palette::HIGHLIGHT };
            items.push((v.t_s + 2e-6, wrap(&s, cols).into_iter().map(|l| (l, c)).collect()));
        }
        items.sort_by(|a, b| a.0.total_cmp(&b.0));
        items.into_iter().for_each(|(_, v)| lines.extend(v));
        let room = ((TIMELINE_Y_PX as i32 - 8 - y) / 11).max(0) as usize;
        for (l, c) in lines.iter().skip(lines.len().saturating_sub(room)) {
            text(pix, x, y, l, 1, *c);
            y += 11;
        }
        refused
    }

    fn timeline(&self, pix: &mut Pixmap, t_s: f64) {
        let tl = self.tl();
        let top = TIMELINE_Y_PX;
        rect(pix, 0.0, top, WIDTH_PX as f32, HEIGHT_PX as f32 - top, palette::BAND);
        let (l, w) = (TIMELINE_LEFT_PX, WIDTH_PX as f32 - TIMELINE_LEFT_PX - TIMELINE_RIGHT_PX);
        let (from, to) = self.range_s;
        let span = (to - from).max(1e-6);
        let xt = |t: f64| l + ((t.clamp(from, to) - from) / span) as f32 * w;
        // Whether [a, b] meets the range shown.
        let shown = |a: f64, b: f64| b >= from && a <= to;
        for (name, y) in [("skills", 6), ("thinking", 30), ("wake-ups", 52), ("events", 74)] {
            text(pix, 8, top as i32 + y + 4, name, 1, palette::INK);
        }
        for s in tl.skills.iter().filter(|s| shown(s.t0_s, s.t1_s.unwrap_or(tl.t_end_s))) {
            let (a, b) = (xt(s.t0_s), xt(s.t1_s.unwrap_or(tl.t_end_s)));
            let c = match s.code.as_deref() {
                None => palette::ROUTE,
                Some("succeeded") => [60, 155, 60],
                Some("stopped") => [140, 140, 140],
                Some("blocked") => palette::BLOCKED,
                Some(_) => [139, 0, 0],
            };
            rect(pix, a, top + 6.0, b - a - 1.0, 18.0, c);
            let label = format!("{}:{}", s.skill, s.code.as_deref().unwrap_or("running"));
            if (b - a) as i32 > crate::tools::picture::text::width_px(&label, 1) + 6 {
                text(pix, a as i32 + 3, top as i32 + 11, &label, 1, [255, 255, 255]);
            }
        }
        for c in tl.calls.iter().filter(|c| shown(c.t0_s, c.t1_s.unwrap_or(tl.t_end_s))) {
            let (a, b) = (xt(c.t0_s), xt(c.t1_s.unwrap_or(tl.t_end_s)));
            rect(pix, a, top + 30.0, (b - a).max(2.0), 16.0, THINK);
        }
        for wk in tl.wakes.iter().filter(|wk| shown(wk.t_s, wk.t_s)) {
            rect(pix, xt(wk.t_s) - 1.0, top + 52.0, 2.0, 18.0, palette::INK);
        }
        for m in tl.marks.iter().filter(|m| shown(m.t_s, m.t_s)) {
            let c = if m.name.starts_with("shield") { palette::BLOCKED } else { palette::MUTED };
            rect(pix, xt(m.t_s), top + 74.0, 1.5, 14.0, c);
        }
        // The range's ends under the bars.
        let ends_y = HEIGHT_PX as i32 - 12;
        text(pix, l as i32, ends_y, &format!("{from:.1} s"), 1, palette::INK);
        let end_label = format!("{to:.1} s");
        let end_x = (l + w) as i32 - crate::tools::picture::text::width_px(&end_label, 1);
        text(pix, end_x, ends_y, &end_label, 1, palette::INK);
        rect(pix, xt(t_s) - 1.0, top, 3.0, HEIGHT_PX as f32 - top, palette::HIGHLIGHT);
    }
}

/// The timeline's left edge (after the row names), px.
pub const TIMELINE_LEFT_PX: f32 = 100.0;
/// The margin right of the timeline, px.
pub const TIMELINE_RIGHT_PX: f32 = 12.0;

/// The x of the timeline's cursor in a frame (the column of the cursor's colour in the timeline
/// band), px; `None` when there is none.
pub fn cursor_x(pix: &Pixmap) -> Option<u32> {
    let y = (TIMELINE_Y_PX as u32 + 2).min(HEIGHT_PX - 1);
    let [r, g, b] = palette::HIGHLIGHT;
    let row = &pix.data()[(y * WIDTH_PX * 4) as usize..((y + 1) * WIDTH_PX * 4) as usize];
    let xs: Vec<u32> = row
        .chunks_exact(4)
        .enumerate()
        .filter(|(_, p)| p[0] == r && p[1] == g && p[2] == b)
        .map(|(x, _)| x as u32)
        .collect();
    Some((xs.first()? + xs.last()?) / 2)
}
