//! Drawing helpers over `tiny-skia` in image pixels, the palette, and the PNG encoder.
//!
//! Map geometry is turned into image pixels by a [`Viewport`] first and drawn with the identity
//! transform, so that line widths stay in pixels whatever the scale. Long polylines are clipped
//! to the map area (plus a margin) before stroking, which keeps dashes and very deep zooms cheap.

use acres_farm::geom::Vec2;
use tiny_skia::{
    FillRule, LineCap, LineJoin, Paint, PathBuilder, Pixmap, Rect, Stroke, StrokeDash, Transform,
};

use super::view::{clip_segment, Viewport};

/// An sRGB colour.
pub(crate) type Rgb = [u8; 3];

/// The colours of every picture and of its legend.
pub(crate) mod palette {
    use super::Rgb;
    /// The band with the title and the legend.
    pub const BAND: Rgb = [255, 255, 255];
    /// Open country outside the corridor.
    pub const GROUND: Rgb = [244, 242, 235];
    /// The corridor: lanes, field margins, the home yard.
    pub const CORRIDOR: Rgb = [208, 206, 200];
    /// A field that is not in play.
    pub const FIELD_OTHER: Rgb = [228, 228, 222];
    /// The outline of a field that is not in play.
    pub const FIELD_OTHER_EDGE: Rgb = [140, 140, 130];
    /// A field in play.
    pub const FIELD_PLAY: Rgb = [190, 228, 160];
    /// The outline of a field in play.
    pub const FIELD_PLAY_EDGE: Rgb = [60, 125, 45];
    /// A scouted field.
    pub const FIELD_SCOUTED: Rgb = [105, 170, 75];
    /// The outline of a scouted field.
    pub const FIELD_SCOUTED_EDGE: Rgb = [30, 90, 25];
    /// Scout loops (thin dashes).
    pub const LOOP: Rgb = [70, 85, 60];
    /// Home.
    pub const HOME: Rgb = [150, 70, 25];
    /// Lane nodes.
    pub const NODE: Rgb = [110, 110, 105];
    /// The running skill's route.
    pub const ROUTE: Rgb = [25, 95, 225];
    /// The accepted plan (dashes).
    pub const PLAN: Rgb = [245, 135, 0];
    /// The driven path.
    pub const DRIVEN: Rgb = [35, 35, 35];
    /// The vehicle's body.
    pub const VEHICLE: Rgb = [255, 214, 0];
    /// Outlines and the nose of the vehicle, text.
    pub const INK: Rgb = [20, 20, 20];
    /// Blocked places.
    pub const BLOCKED: Rgb = [215, 25, 35];
    /// LiDAR returns.
    pub const RETURNS: Rgb = [205, 0, 205];
    /// Sensed objects.
    pub const OBJECT: Rgb = [105, 35, 165];
    /// The highlighted place.
    pub const HIGHLIGHT: Rgb = [225, 0, 0];
    /// Faint grid lines.
    pub const GRID: Rgb = [0, 0, 0];
    /// Secondary text.
    pub const MUTED: Rgb = [90, 90, 90];
}

/// An anti-aliased solid paint.
pub(crate) fn paint(c: Rgb, alpha: f32) -> Paint<'static> {
    let mut p = Paint::default();
    p.set_color_rgba8(c[0], c[1], c[2], (alpha.clamp(0.0, 1.0) * 255.0).round() as u8);
    p.anti_alias = true;
    p
}

/// A stroke of `width` px with round joins, and dashes when `dash` is given.
pub(crate) fn stroke(width: f32, dash: Option<&[f32]>) -> Stroke {
    Stroke {
        width,
        line_cap: if dash.is_some() { LineCap::Butt } else { LineCap::Round },
        line_join: LineJoin::Round,
        dash: dash.and_then(|d| StrokeDash::new(d.to_vec(), 0.0)),
        ..Stroke::default()
    }
}

/// Strokes the path in `pb`, if it has any segment.
pub(crate) fn stroke_with(pix: &mut Pixmap, pb: PathBuilder, color: Rgb, alpha: f32, st: &Stroke) {
    if let Some(path) = pb.finish() {
        pix.stroke_path(&path, &paint(color, alpha), st, Transform::identity(), None);
    }
}

/// Fills the path in `pb`, if it has any area.
pub(crate) fn fill_with(pix: &mut Pixmap, pb: PathBuilder, color: Rgb, alpha: f32) {
    if let Some(path) = pb.finish() {
        pix.fill_path(&path, &paint(color, alpha), FillRule::Winding, Transform::identity(), None);
    }
}

/// Fills an axis-aligned rectangle given by its corners, px.
pub(crate) fn fill_rect(pix: &mut Pixmap, l: f32, t: f32, r: f32, b: f32, color: Rgb, alpha: f32) {
    if let Some(rect) = Rect::from_ltrb(l, t, r, b) {
        pix.fill_rect(rect, &paint(color, alpha), Transform::identity(), None);
    }
}

/// Adds map polylines, clipped to the viewport grown by `margin_px`, to a path.
pub(crate) fn push_polyline(pb: &mut PathBuilder, vp: &Viewport, pts: &[Vec2], closed: bool, margin_px: f32) {
    let (l, t, r, b) = vp.rect_px();
    let clip = (l - margin_px, t - margin_px, r + margin_px, b + margin_px);
    let n = pts.len();
    if n < 2 {
        return;
    }
    let segs = if closed { n } else { n - 1 };
    let mut pen: Option<(f32, f32)> = None;
    let mut a = vp.px(pts[0]);
    for i in 0..segs {
        let bpt = vp.px(pts[(i + 1) % n]);
        if let Some((p, q)) = clip_segment(a, bpt, clip) {
            if pen != Some(p) {
                pb.move_to(p.0, p.1);
            }
            pb.line_to(q.0, q.1);
            pen = Some(q);
        } else {
            pen = None;
        }
        a = bpt;
    }
}

/// Adds a closed polygon of image points to a path.
pub(crate) fn push_polygon(pb: &mut PathBuilder, pts: &[(f32, f32)]) {
    if let Some((first, rest)) = pts.split_first() {
        pb.move_to(first.0, first.1);
        for p in rest {
            pb.line_to(p.0, p.1);
        }
        pb.close();
    }
}

/// Encodes an opaque pixmap as an 8-bit RGB PNG with `tEXt` chunks: fast deflate, Sub filter.
pub(crate) fn encode_png(pix: &Pixmap, texts: &[(String, String)]) -> Result<Vec<u8>, png::EncodingError> {
    let data = pix.data();
    let mut rgb = Vec::with_capacity(data.len() / 4 * 3);
    for px in data.chunks_exact(4) {
        rgb.extend_from_slice(&px[..3]);
    }
    let mut out = Vec::with_capacity(64 * 1024);
    let mut enc = png::Encoder::new(&mut out, pix.width(), pix.height());
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fast);
    enc.set_filter(png::FilterType::Sub);
    enc.set_adaptive_filter(png::AdaptiveFilterType::NonAdaptive);
    for (k, v) in texts {
        enc.add_text_chunk(k.clone(), v.clone())?;
    }
    let mut w = enc.write_header()?;
    w.write_image_data(&rgb)?;
    w.finish()?;
    Ok(out)
}
