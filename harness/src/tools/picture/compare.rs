//! The compare view: two earlier pictures side by side in one picture of the same size.
//!
//! Each input is decoded (any PNG colour type; alpha is laid over white). A picture made by
//! [`render`](super::render) is recognised by its `tEXt` metadata: its map area (without the
//! inset of a map that has one) is cut out and shrunk to half its size, 320 px on its longer
//! side, and the panel gets new tick labels, a scale bar and the metres per pixel at the new
//! scale, so that both panels read as maps. Any other PNG is shrunk (or grown) whole to fit a
//! 320 × 320 px cell. The band on top holds the title and the legend; each panel
//! has its label and, when known, its frame, time and view above it.

use tiny_skia::Pixmap;

use super::canvas::{self, fill_rect, palette as pal};
use super::frame::{self, BAND_PX};
use super::text;
use super::view::{fmt_num, Viewport};
use super::{PictureError, HEIGHT, WIDTH};

/// Side of each panel, px.
const PANEL_PX: u32 = 320;
/// Top of the panels, px.
const PANEL_TOP: u32 = BAND_PX + 40;

/// A decoded input: 8-bit RGB pixels and the metadata of a rendered picture, if any.
struct Decoded {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
    meta: Meta,
}

/// The `tEXt` metadata that [`render`](super::render) writes.
#[derive(Debug, Default)]
struct Meta {
    frame: Option<String>,
    t_s: Option<f64>,
    view: Option<String>,
    view_box: Option<[f64; 4]>,
}

fn decode(bytes: &[u8], which: &str) -> Result<Decoded, PictureError> {
    let bad = |message: String| PictureError::BadPng { which: which.to_string(), message };
    let mut decoder = png::Decoder::new(bytes);
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| bad(e.to_string()))?;
    let mut meta = Meta::default();
    for chunk in &reader.info().uncompressed_latin1_text {
        let text = chunk.text.as_str();
        match chunk.keyword.as_str() {
            "acres-frame" => meta.frame = Some(text.to_string()),
            "acres-t-s" => meta.t_s = text.parse().ok(),
            "acres-view" => meta.view = Some(text.to_string()),
            "acres-view-box" => {
                let v: Vec<f64> = text.split_whitespace().filter_map(|s| s.parse().ok()).collect();
                if let [a, b, c, d] = v[..] {
                    meta.view_box = Some([a, b, c, d]).filter(|_| c > a && d > b);
                }
            }
            _ => {}
        }
    }
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).map_err(|e| bad(e.to_string()))?;
    let (w, h) = (info.width as usize, info.height as usize);
    let channels = match info.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => return Err(bad("palette images are not expanded".into())),
    };
    let mut rgb = Vec::with_capacity(w * h * 3);
    for row in buf.chunks(info.line_size).take(h) {
        for px in row.chunks_exact(channels).take(w) {
            let (c, a) = match channels {
                1 => ([px[0]; 3], 255),
                2 => ([px[0]; 3], px[1]),
                3 => ([px[0], px[1], px[2]], 255),
                _ => ([px[0], px[1], px[2]], px[3]),
            };
            for v in c {
                // Over white: v·a + 255·(255 − a), divided by 255 and rounded.
                let over = (u32::from(v) * u32::from(a) + 255 * (255 - u32::from(a)) + 127) / 255;
                rgb.push(over as u8);
            }
        }
    }
    if w == 0 || h == 0 || rgb.len() != w * h * 3 {
        return Err(bad("the image has no pixels".into()));
    }
    Ok(Decoded { width: info.width, height: info.height, rgb, meta })
}

/// Copies the source rectangle `(x, y, w, h)` of `src` into the destination rectangle of `dst`,
/// averaging the source pixels that each destination pixel covers.
fn resample(src: &Decoded, s: (u32, u32, u32, u32), dst: &mut Pixmap, d: (u32, u32, u32, u32)) {
    let stride_s = src.width as usize * 3;
    let stride_d = dst.width() as usize * 4;
    let data = dst.data_mut();
    for dy in 0..d.3 {
        let y0 = s.1 + dy * s.3 / d.3;
        let y1 = (s.1 + (dy + 1) * s.3 / d.3).max(y0 + 1);
        for dx in 0..d.2 {
            let x0 = s.0 + dx * s.2 / d.2;
            let x1 = (s.0 + (dx + 1) * s.2 / d.2).max(x0 + 1);
            let mut sum = [0u32; 3];
            for y in y0..y1 {
                let row = &src.rgb[y as usize * stride_s..];
                for x in x0..x1 {
                    let p = &row[x as usize * 3..x as usize * 3 + 3];
                    sum[0] += u32::from(p[0]);
                    sum[1] += u32::from(p[1]);
                    sum[2] += u32::from(p[2]);
                }
            }
            let n = (y1 - y0) * (x1 - x0);
            let at = (d.1 + dy) as usize * stride_d + (d.0 + dx) as usize * 4;
            for k in 0..3 {
                data[at + k] = ((sum[k] + n / 2) / n) as u8;
            }
            data[at + 3] = 255;
        }
    }
}

/// Draws one panel with its header; `left` is the panel's left edge.
fn panel(pix: &mut Pixmap, src: &Decoded, label: &str, tag: &str, left: u32) {
    let chars = (PANEL_PX / 8 - 1) as usize;
    let head = format!("{tag}: {label}");
    text::draw(pix, left as i32 + 4, BAND_PX as i32 + 8, &text::fit(&head, chars), 1, pal::INK);
    let mut info = Vec::new();
    if let Some(f) = &src.meta.frame {
        info.push(f.clone());
    }
    if let Some(t) = src.meta.t_s {
        info.push(format!("t={t:.1} s"));
    }
    if let Some(v) = &src.meta.view {
        info.push(v.clone());
    }
    let info = text::fit(&info.join("  "), chars);
    text::draw(pix, left as i32 + 4, BAND_PX as i32 + 22, &info, 1, pal::ROUTE);
    let rendered = src.width == WIDTH && src.height == HEIGHT;
    match src.meta.view_box.filter(|_| rendered) {
        Some([x0, y0, x1, y1]) => {
            // The map's own part of the picture: the whole map area, or the map beside its inset
            // (the larger side of the view box fills the area's 640 px).
            let side = f64::from(WIDTH);
            let (span_x, span_y) = (x1 - x0, y1 - y0);
            let (w, h) = if span_x >= span_y {
                (WIDTH, ((side * span_y / span_x).round() as u32).clamp(1, WIDTH))
            } else {
                (((side * span_x / span_y).round() as u32).clamp(1, WIDTH), WIDTH)
            };
            let (pw, ph) = ((w / 2).max(1), (h / 2).max(1));
            resample(src, (0, BAND_PX, w, h), pix, (left, PANEL_TOP, pw, ph));
            let vp = Viewport {
                left_px: left as f32,
                top_px: PANEL_TOP as f32,
                width_px: pw as f32,
                height_px: ph as f32,
                min_x: x0,
                max_y: y1,
                m_per_px: span_x / f64::from(pw),
            };
            // Cover the shrunken frame labels of the original with light boxes, then draw the
            // frame again at the new scale with the original's grid lines.
            let orig = Viewport {
                left_px: 0.0,
                top_px: BAND_PX as f32,
                width_px: w as f32,
                height_px: h as f32,
                m_per_px: span_x / f64::from(w),
                ..vp
            };
            let (dx, dy) = (left as i32, PANEL_TOP as i32 - BAND_PX as i32 / 2);
            for b in frame::frame_boxes(&orig) {
                let half =
                    (b.0.div_euclid(2) + dx, b.1.div_euclid(2) + dy, (b.2 + 1) / 2 + dx, (b.3 + 1) / 2 + dy);
                text::light_box(pix, half);
            }
            frame::frame(pix, &vp, frame::grid_step_m(&orig), &[]);
            let below = (PANEL_TOP + ph + 8) as f32;
            let bar_left = frame::scale_bar(pix, &vp, (left + PANEL_PX - 10) as f32, below);
            let mpp = format!("{} m/px", fmt_num(vp.m_per_px));
            let x = bar_left as i32 - 14 - text::width_px(&mpp, 1);
            text::draw(pix, x, below as i32 + 6, &mpp, 1, pal::MUTED);
            let lines = [
                format!("view box x {} .. {} m", fmt_num(x0), fmt_num(x1)),
                format!("         y {} .. {} m", fmt_num(y0), fmt_num(y1)),
            ];
            for (k, line) in lines.iter().enumerate() {
                text::draw(pix, left as i32 + 8, below as i32 + 28 + 12 * k as i32, line, 1, pal::INK);
            }
        }
        None => {
            let scale =
                (f64::from(PANEL_PX) / f64::from(src.width)).min(f64::from(PANEL_PX) / f64::from(src.height));
            let w = ((f64::from(src.width) * scale).round() as u32).clamp(1, PANEL_PX);
            let h = ((f64::from(src.height) * scale).round() as u32).clamp(1, PANEL_PX);
            let (x, y) = (left + (PANEL_PX - w) / 2, PANEL_TOP + (PANEL_PX - h) / 2);
            resample(src, (0, 0, src.width, src.height), pix, (x, y, w, h));
        }
    }
}

/// Two earlier pictures side by side, each shrunk to fit half the width, with their labels: a
/// PNG of [`WIDTH`] × [`HEIGHT`]. Fails when an input is not a readable PNG.
pub fn compare(a_png: &[u8], a_label: &str, b_png: &[u8], b_label: &str) -> Result<Vec<u8>, PictureError> {
    let a = decode(a_png, a_label)?;
    let b = decode(b_png, b_label)?;
    let mut pix = Pixmap::new(WIDTH, HEIGHT).expect("640 x 692 is a valid pixmap size");
    pix.fill(tiny_skia::Color::from_rgba8(pal::GROUND[0], pal::GROUND[1], pal::GROUND[2], 255));
    fill_rect(&mut pix, 0.0, 0.0, WIDTH as f32, BAND_PX as f32, pal::BAND, 1.0);
    fill_rect(&mut pix, 0.0, BAND_PX as f32 - 1.0, WIDTH as f32, BAND_PX as f32, pal::INK, 1.0);
    text::draw(&mut pix, 6, 4, "compare", 2, pal::INK);
    text::draw(
        &mut pix,
        6 + text::width_px("compare", 2) + 16,
        8,
        "A left, B right, each at half size",
        1,
        pal::ROUTE,
    );
    frame::legend(&mut pix, 6.0, 26.0, WIDTH as f32 - 4.0);
    panel(&mut pix, &a, a_label, "A", 0);
    panel(&mut pix, &b, b_label, "B", PANEL_PX);
    let mid = PANEL_PX as f32;
    fill_rect(&mut pix, mid - 1.0, BAND_PX as f32, mid + 1.0, HEIGHT as f32, pal::INK, 1.0);
    let texts =
        [("acres-view", "compare".to_string()), ("acres-a", a_label.into()), ("acres-b", b_label.into())]
            .map(|(k, v)| (k.to_string(), super::latin1(&v)));
    canvas::encode_png(&pix, &texts).map_err(|e| PictureError::Encode { message: e.to_string() })
}
