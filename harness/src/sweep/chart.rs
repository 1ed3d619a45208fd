//! The cost-vs-success picture of a leaderboard: one point per group (x: USD per run, y: the
//! success rate, its Wilson interval as a vertical bar) and the Pareto front (the groups no other
//! group beats on both: cheaper or as cheap, and as successful or more) as a line, in SVG and PNG
//! (640 × 480, the same geometry).

use tiny_skia::{Color, Paint, PathBuilder, Pixmap, Stroke, Transform};

use super::board::Group;

/// The picture's width, pixels.
pub const WIDTH_PX: u32 = 640;
/// The picture's height, pixels.
pub const HEIGHT_PX: u32 = 480;
const MARGIN_PX: f32 = 48.0;

/// The groups on the Pareto front (indices), cheapest first: no other group has a cost at most
/// theirs and a success rate at least theirs with one of the two strictly better.
pub fn pareto_front(groups: &[Group]) -> Vec<usize> {
    let pts: Vec<(f64, f64)> =
        groups.iter().map(|g| (g.usd_per_run, g.success_rate.unwrap_or(0.0))).collect();
    let mut front: Vec<usize> = (0..pts.len())
        .filter(|&i| {
            !pts.iter().enumerate().any(|(j, q)| {
                j != i && q.0 <= pts[i].0 && q.1 >= pts[i].1 && (q.0 < pts[i].0 || q.1 > pts[i].1)
            })
        })
        .collect();
    front.sort_by(|&a, &b| pts[a].0.total_cmp(&pts[b].0).then(pts[a].1.total_cmp(&pts[b].1)));
    front
}

/// Where a group is drawn: pixels from the top left.
fn place(groups: &[Group]) -> Vec<(f32, f32, f32, f32)> {
    let max_usd = groups.iter().map(|g| g.usd_per_run).fold(0.0f64, f64::max);
    let span = if max_usd > 0.0 { max_usd * 1.1 } else { 1.0 };
    let w = WIDTH_PX as f32 - 2.0 * MARGIN_PX;
    let h = HEIGHT_PX as f32 - 2.0 * MARGIN_PX;
    let y = |r: f64| MARGIN_PX + h * (1.0 - r as f32);
    groups
        .iter()
        .map(|g| {
            let x = MARGIN_PX + w * (g.usd_per_run / span) as f32;
            let (lo, hi) = g.wilson95.unwrap_or((0.0, 0.0));
            (x, y(g.success_rate.unwrap_or(0.0)), y(lo), y(hi))
        })
        .collect()
}

fn label(g: &Group) -> String {
    format!("{} {} {}", g.model, g.mode, g.profile)
}

/// The picture as SVG text.
pub fn svg(groups: &[Group]) -> String {
    let (w, h, m) = (WIDTH_PX as f32, HEIGHT_PX as f32, MARGIN_PX);
    let max_usd = groups.iter().map(|g| g.usd_per_run).fold(0.0f64, f64::max);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n\
         <rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\n\
         <path d=\"M{m} {m} V{} H{}\" stroke=\"#000\" fill=\"none\"/>\n\
         <text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">USD per run (0 to {:.4})</text>\n\
         <text x=\"14\" y=\"{}\" font-size=\"12\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">success rate (0 to 1)</text>\n",
        h - m,
        w - m,
        w / 2.0,
        h - 12.0,
        max_usd * 1.1,
        h / 2.0,
        h / 2.0
    );
    let at = place(groups);
    let front = pareto_front(groups);
    if !front.is_empty() {
        let pts: Vec<String> = front.iter().map(|&i| format!("{:.1},{:.1}", at[i].0, at[i].1)).collect();
        s.push_str(&format!(
            "<polyline points=\"{}\" stroke=\"#c03020\" stroke-width=\"2\" fill=\"none\"/>\n",
            pts.join(" ")
        ));
    }
    for (g, (x, y, lo, hi)) in groups.iter().zip(&at) {
        let esc = label(g).replace('&', "&amp;").replace('<', "&lt;");
        s.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{lo:.1}\" x2=\"{x:.1}\" y2=\"{hi:.1}\" stroke=\"#4060a0\"/>\n\
             <circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"#2040a0\"><title>{esc}</title></circle>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{esc}</text>\n",
            x + 8.0,
            y - 6.0
        ));
    }
    s.push_str("</svg>\n");
    s
}

/// The picture as PNG bytes (the SVG's geometry, without its text).
pub fn png(groups: &[Group]) -> Result<Vec<u8>, String> {
    let mut pix = Pixmap::new(WIDTH_PX, HEIGHT_PX).ok_or("no pixmap")?;
    pix.fill(Color::WHITE);
    let (w, h, m) = (WIDTH_PX as f32, HEIGHT_PX as f32, MARGIN_PX);
    let line = |pix: &mut Pixmap, pts: &[(f32, f32)], rgb: (u8, u8, u8), width: f32| {
        let mut pb = PathBuilder::new();
        for (i, (x, y)) in pts.iter().enumerate() {
            if i == 0 {
                pb.move_to(*x, *y);
            } else {
                pb.line_to(*x, *y);
            }
        }
        if let Some(path) = pb.finish() {
            let mut paint = Paint::default();
            paint.set_color_rgba8(rgb.0, rgb.1, rgb.2, 255);
            let stroke = Stroke { width, ..Stroke::default() };
            pix.stroke_path(&path, &paint, &stroke, Transform::identity(), None);
        }
    };
    line(&mut pix, &[(m, m), (m, h - m), (w - m, h - m)], (0, 0, 0), 1.0);
    let at = place(groups);
    let front: Vec<(f32, f32)> = pareto_front(groups).iter().map(|&i| (at[i].0, at[i].1)).collect();
    if front.len() > 1 {
        line(&mut pix, &front, (192, 48, 32), 2.0);
    }
    for (x, y, lo, hi) in &at {
        line(&mut pix, &[(*x, *lo), (*x, *hi)], (64, 96, 160), 1.0);
        if let Some(c) = PathBuilder::from_circle(*x, *y, 5.0) {
            let mut paint = Paint::default();
            paint.set_color_rgba8(32, 64, 160, 255);
            pix.fill_path(&c, &paint, tiny_skia::FillRule::Winding, Transform::identity(), None);
        }
    }
    let mut out = Vec::new();
    {
        let mut enc = ::png::Encoder::new(&mut out, WIDTH_PX, HEIGHT_PX);
        enc.set_color(::png::ColorType::Rgba);
        enc.set_depth(::png::BitDepth::Eight);
        let mut wr = enc.write_header().map_err(|e| e.to_string())?;
        wr.write_image_data(pix.data()).map_err(|e| e.to_string())?;
    }
    Ok(out)
}
