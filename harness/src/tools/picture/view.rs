//! Which part of the map a picture shows, and the mapping between metres and pixels.
//!
//! A [`Viewport`] is a rectangular map area on the image with north up and equal metres per pixel
//! in x and y (square for every view but the map with an inset). [`resolve`] turns a [`View`] of a
//! [`Scene`] into the centre and the extent to show; [`fit`] rounds that to a tidy scale (1, 1.25,
//! 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten metres per pixel) so that the view box and the
//! tick labels read as round numbers. [`split`] lays out the map and its inset (see the module
//! docs of `picture`).

use acres_farm::geom::Vec2;
use acres_farm::Map;

use super::{Around, PictureError, Region, Scene, View, MAX_RADIUS_M, MIN_RADIUS_M};

/// The radius of an `Around` zoom when none is given, m.
pub const DEFAULT_RADIUS_M: f64 = 60.0;

/// A rectangular map area on an image and its scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Viewport {
    /// Image column of the area's left edge, px.
    pub left_px: f32,
    /// Image row of the area's top edge, px.
    pub top_px: f32,
    /// Width of the area, px.
    pub width_px: f32,
    /// Height of the area, px.
    pub height_px: f32,
    /// Map x at the left edge, m.
    pub min_x: f64,
    /// Map y at the top edge, m.
    pub max_y: f64,
    /// Metres per pixel, equal in x and y.
    pub m_per_px: f64,
}

impl Viewport {
    /// The image position of a map point, px (fractional).
    pub fn px(&self, p: Vec2) -> (f32, f32) {
        (
            self.left_px + ((p.x - self.min_x) / self.m_per_px) as f32,
            self.top_px + ((self.max_y - p.y) / self.m_per_px) as f32,
        )
    }

    /// A length in metres as pixels.
    pub fn len_px(&self, m: f64) -> f32 {
        (m / self.m_per_px) as f32
    }

    /// `[min_x, min_y, max_x, max_y]` of the shown area, m.
    pub fn view_box(&self) -> [f64; 4] {
        // Rounded to micrometres so that 0.4 m/px gives 3.2, not 3.2000000000000455.
        let tidy = |v: f64| (v * 1e6).round() / 1e6;
        let span_x = f64::from(self.width_px) * self.m_per_px;
        let span_y = f64::from(self.height_px) * self.m_per_px;
        [tidy(self.min_x), tidy(self.max_y - span_y), tidy(self.min_x + span_x), tidy(self.max_y)]
    }

    /// The image rectangle of the area: `(left, top, right, bottom)`, px.
    pub fn rect_px(&self) -> (f32, f32, f32, f32) {
        (self.left_px, self.top_px, self.left_px + self.width_px, self.top_px + self.height_px)
    }

    /// The same area moved to the image's top-left corner (to draw it on a pixmap of its own).
    pub fn at_origin(&self) -> Viewport {
        Viewport { left_px: 0.0, top_px: 0.0, ..*self }
    }
}

/// What a view asks to show: the centre and the extent of a rectangle, m, and a short title.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Wanted {
    /// Centre of the rectangle, map frame.
    pub centre: Vec2,
    /// Smallest width (east–west) that shows all that was asked, m.
    pub span_x_m: f64,
    /// Smallest height (north–south) that shows all that was asked, m.
    pub span_y_m: f64,
    /// The view as the title says it, e.g. `zoom F53`.
    pub title: String,
}

impl Wanted {
    /// A square of side `span_m` around `centre`.
    fn square(centre: Vec2, span_m: f64, title: String) -> Wanted {
        Wanted { centre, span_x_m: span_m, span_y_m: span_m, title }
    }
}

/// The map's bounds and the home yard: `(lo, hi)` corners, m.
pub(crate) fn map_extent(map: &Map) -> (Vec2, Vec2) {
    let (lo, hi) = map.bounds();
    let h = map.home();
    let r = map.home_radius_m;
    (Vec2::new(lo.x.min(h.x - r), lo.y.min(h.y - r)), Vec2::new(hi.x.max(h.x + r), hi.y.max(h.y + r)))
}

/// The margin around the whole map for its larger extent, m.
fn map_margin_m(extent_m: f64) -> f64 {
    (0.03 * extent_m).max(25.0)
}

/// The whole map: its bounds and the home yard, with a margin, as a square.
pub(crate) fn whole_map(map: &Map) -> Wanted {
    let (lo, hi) = map_extent(map);
    let extent = (hi.x - lo.x).max(hi.y - lo.y);
    Wanted::square(lo.add(hi).scale(0.5), extent + 2.0 * map_margin_m(extent), "map".into())
}

/// The margin around the whole map beside an inset, m: the inset needs the room more.
const TIGHT_MARGIN_M: f64 = 10.0;

/// The whole map as a rectangle just as wide and as high as it needs (the map beside an inset).
fn whole_map_tight(map: &Map) -> Wanted {
    let (lo, hi) = map_extent(map);
    let margin = TIGHT_MARGIN_M;
    Wanted {
        centre: lo.add(hi).scale(0.5),
        span_x_m: hi.x - lo.x + 2.0 * margin,
        span_y_m: hi.y - lo.y + 2.0 * margin,
        title: "map".into(),
    }
}

/// The smallest side of an inset, px: below it the map is drawn alone.
pub(crate) const MIN_INSET_PX: f32 = 160.0;

/// The map and its inset on the map area `(left, top, side)`: the whole map as wide (or as high)
/// as the area at the scale that fits it, and the inset on the rest, below (a map wider than high)
/// or to the right of it, at the inset's scale or the tidy scale that holds it whole. `None` when
/// the rest would be narrower than [`MIN_INSET_PX`].
pub(crate) fn split(
    map: &Map,
    inset: &super::Inset,
    (left, top, side): (f32, f32, f32),
) -> Option<(Wanted, Viewport, Viewport)> {
    let whole = whole_map_tight(map);
    let wide = whole.span_x_m >= whole.span_y_m;
    let (along, across) =
        if wide { (whole.span_x_m, whole.span_y_m) } else { (whole.span_y_m, whole.span_x_m) };
    let side_m = f64::from(side);
    let m_per_px = nice_ceil((along / side_m).max(across / (side_m - f64::from(MIN_INSET_PX))));
    // The map's part in whole multiples of 8 px, so that its edges fall on round coordinates.
    let map_px = ((across / m_per_px / 8.0).ceil() * 8.0) as f32;
    let rest_px = side - map_px;
    if rest_px < MIN_INSET_PX {
        return None;
    }
    let main = if wide {
        fit_at(&whole, m_per_px, (left, top, side, map_px))
    } else {
        fit_at(&whole, m_per_px, (left, top, map_px, side))
    };
    let rect = if wide { (left, top + map_px, side, rest_px) } else { (left + map_px, top, rest_px, side) };
    let need = (inset.span_m / f64::from(rest_px.min(side))).max(inset.m_per_px);
    let wanted = Wanted::square(inset.centre, inset.span_m, inset.title.clone());
    Some((whole, main, fit_at(&wanted, nice_ceil(need), rect)))
}

/// Checks a view against the scene and says what it shows.
pub(crate) fn resolve(scene: &Scene) -> Result<Wanted, PictureError> {
    let region = match &scene.view {
        View::Map => return Ok(whole_map(scene.map)),
        View::Zoom(region) => region,
    };
    let around = |centre: Vec2, radius_m: f64, what: String| -> Result<Wanted, PictureError> {
        if !(radius_m.is_finite() && (MIN_RADIUS_M..=MAX_RADIUS_M).contains(&radius_m)) {
            return Err(PictureError::BadRadius { radius_m, min_m: MIN_RADIUS_M, max_m: MAX_RADIUS_M });
        }
        if !(centre.x.is_finite() && centre.y.is_finite()) {
            return Err(PictureError::BadCentre { x: centre.x, y: centre.y });
        }
        let title = format!("zoom {what} r={} m", fmt_num(radius_m));
        Ok(Wanted::square(centre, 2.0 * radius_m * 1.08, title))
    };
    match region {
        Region::Field(id) => {
            let field =
                scene.map.fields.get(id).ok_or_else(|| PictureError::UnknownField { field: id.clone() })?;
            let (mut lo, mut hi) = (field.polygon[0], field.polygon[0]);
            for p in &field.polygon {
                lo = Vec2::new(lo.x.min(p.x), lo.y.min(p.y));
                hi = Vec2::new(hi.x.max(p.x), hi.y.max(p.y));
            }
            let extent = (hi.x - lo.x).max(hi.y - lo.y);
            let margin = scene.map.field_margin_m + (0.08 * extent).max(10.0);
            Ok(Wanted::square(lo.add(hi).scale(0.5), extent + 2.0 * margin, format!("zoom {id}")))
        }
        Region::Around { what, radius_m } => {
            let r = radius_m.unwrap_or(DEFAULT_RADIUS_M);
            match what {
                Around::Vehicle => around(scene.vehicle.pos(), r, "vehicle".into()),
                Around::Home => around(scene.map.home(), r, "home".into()),
                Around::Site => around(scene.site.ok_or(PictureError::NoSite)?, r, "site".into()),
            }
        }
        Region::Circle { x, y, radius_m } => {
            around(Vec2::new(*x, *y), *radius_m, format!("x={} y={}", fmt_num(*x), fmt_num(*y)))
        }
    }
}

/// The viewport that shows `wanted` on a square of `size_px` at (`left_px`, `top_px`).
pub(crate) fn fit(wanted: &Wanted, left_px: f32, top_px: f32, size_px: f32) -> Viewport {
    let size = f64::from(size_px);
    let m_per_px = nice_ceil((wanted.span_x_m / size).max(wanted.span_y_m / size));
    fit_at(wanted, m_per_px, (left_px, top_px, size_px, size_px))
}

/// The viewport centred on `wanted` at `m_per_px` on the rectangle `(left, top, width, height)`.
fn fit_at(
    wanted: &Wanted,
    m_per_px: f64,
    (left_px, top_px, width_px, height_px): (f32, f32, f32, f32),
) -> Viewport {
    // Snap the centre to 8 px so that the edges fall on round coordinates; this moves the view
    // by at most 4 px, well inside the margins of every view.
    let snap = 8.0 * m_per_px;
    let cx = (wanted.centre.x / snap).round() * snap;
    let cy = (wanted.centre.y / snap).round() * snap;
    let (half_w, half_h) = (f64::from(width_px) / 2.0 * m_per_px, f64::from(height_px) / 2.0 * m_per_px);
    Viewport { left_px, top_px, width_px, height_px, min_x: cx - half_w, max_y: cy + half_h, m_per_px }
}

/// The smallest tidy number (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten) not
/// below `v`; `v` must be positive and finite.
pub(crate) fn nice_ceil(v: f64) -> f64 {
    const MANTISSAS: [f64; 11] = [1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0];
    let k = v.log10().floor() as i32;
    let scaled = |m: f64| if k >= 0 { m * 10f64.powi(k) } else { m / 10f64.powi(-k) };
    MANTISSAS.iter().map(|m| scaled(*m)).find(|c| *c >= v * (1.0 - 1e-9)).unwrap_or_else(|| scaled(10.0))
}

/// The smallest step of 1, 2 or 5 times a power of ten that is at least `v`.
pub(crate) fn step_ceil(v: f64) -> f64 {
    let k = v.log10().floor() as i32;
    let scaled = |m: f64| if k >= 0 { m * 10f64.powi(k) } else { m / 10f64.powi(-k) };
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| scaled(*m)).find(|c| *c >= v * (1.0 - 1e-9)).unwrap_or(v)
}

/// A number as short text: no decimals for whole numbers, else up to two.
pub(crate) fn fmt_num(v: f64) -> String {
    if (v - v.round()).abs() < 1e-6 {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Clips the segment `a`–`b` to the rectangle `(x0, y0, x1, y1)` (Liang–Barsky).
pub(crate) fn clip_segment(
    a: (f32, f32),
    b: (f32, f32),
    r: (f32, f32, f32, f32),
) -> Option<((f32, f32), (f32, f32))> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for (p, q) in [(-dx, a.0 - r.0), (dx, r.2 - a.0), (-dy, a.1 - r.1), (dy, r.3 - a.1)] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
            if t0 > t1 {
                return None;
            }
        }
    }
    Some(((a.0 + t0 * dx, a.1 + t0 * dy), (a.0 + t1 * dx, a.1 + t1 * dy)))
}

/// Clips a polygon (image pixels) to a rectangle (Sutherland–Hodgman); may return fewer than 3
/// points when nothing is left.
pub(crate) fn clip_polygon(poly: &[(f32, f32)], r: (f32, f32, f32, f32)) -> Vec<(f32, f32)> {
    type Edge = (fn((f32, f32), f32) -> bool, fn((f32, f32), (f32, f32), f32) -> (f32, f32));
    let cut_x = |a: (f32, f32), b: (f32, f32), x: f32| (x, a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0));
    let cut_y = |a: (f32, f32), b: (f32, f32), y: f32| (a.0 + (b.0 - a.0) * (y - a.1) / (b.1 - a.1), y);
    let edges: [(Edge, f32); 4] = [
        ((|p, v| p.0 >= v, cut_x), r.0),
        ((|p, v| p.0 <= v, cut_x), r.2),
        ((|p, v| p.1 >= v, cut_y), r.1),
        ((|p, v| p.1 <= v, cut_y), r.3),
    ];
    let mut out: Vec<(f32, f32)> = poly.to_vec();
    for ((inside, cut), v) in edges {
        let input = std::mem::take(&mut out);
        for (i, &cur) in input.iter().enumerate() {
            let prev = input[(i + input.len() - 1) % input.len()];
            match (inside(prev, v), inside(cur, v)) {
                (true, true) => out.push(cur),
                (true, false) => out.push(cut(prev, cur, v)),
                (false, true) => {
                    out.push(cut(prev, cur, v));
                    out.push(cur);
                }
                (false, false) => {}
            }
        }
    }
    out
}

/// The area centroid of a polygon (image pixels); the vertex mean for degenerate ones.
pub(crate) fn centroid(poly: &[(f32, f32)]) -> (f32, f32) {
    let n = poly.len();
    let (mut a2, mut cx, mut cy) = (0.0f64, 0.0f64, 0.0f64);
    for i in 0..n {
        let (p, q) = (poly[i], poly[(i + 1) % n]);
        let cross = f64::from(p.0) * f64::from(q.1) - f64::from(q.0) * f64::from(p.1);
        a2 += cross;
        cx += f64::from(p.0 + q.0) * cross;
        cy += f64::from(p.1 + q.1) * cross;
    }
    if a2.abs() < 1e-6 {
        let (sx, sy) = poly.iter().fold((0.0, 0.0), |s, p| (s.0 + p.0, s.1 + p.1));
        return (sx / n.max(1) as f32, sy / n.max(1) as f32);
    }
    ((cx / (3.0 * a2)) as f32, (cy / (3.0 * a2)) as f32)
}
