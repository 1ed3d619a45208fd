//! Bitmap text with the public-domain 8 × 8 glyphs of `font8x8`, drawn at 1× or 2×.
//!
//! Glyphs are written straight into the pixmap's bytes as opaque pixels (no blending, no
//! anti-aliasing): crisp at 1× and fast. Characters outside ASCII are drawn as `?`.

use font8x8::legacy::BASIC_LEGACY;
use tiny_skia::{Pixmap, Rect, Transform};

use super::canvas::{paint, Rgb};

/// Height and advance of one glyph at 1×, px.
pub(crate) const GLYPH_PX: i32 = 8;

/// Where a label's anchor point lies on the label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// The anchor is the top-left corner.
    TopLeft,
    /// The anchor is the middle of the left edge.
    MidLeft,
    /// The anchor is the centre.
    Centre,
    /// The anchor is the middle of the top edge.
    TopCentre,
}

/// The width of `text` at `scale`, px.
pub(crate) fn width_px(text: &str, scale: i32) -> i32 {
    text.chars().count() as i32 * GLYPH_PX * scale
}

/// Shortens `s` to at most `n` characters, with `~` at the end when cut.
pub(crate) fn fit(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('~');
        t
    }
}

/// Draws `text` with its top-left corner at (`x`, `y`); pixels off the image are skipped.
pub(crate) fn draw(pix: &mut Pixmap, x: i32, y: i32, text: &str, scale: i32, color: Rgb) {
    let (w, h) = (pix.width() as i32, pix.height() as i32);
    let stride = w as usize * 4;
    let data = pix.data_mut();
    let rgba = [color[0], color[1], color[2], 255];
    for (i, ch) in text.chars().enumerate() {
        let code = if ch.is_ascii() { ch as usize } else { '?' as usize };
        let gx = x + i as i32 * GLYPH_PX * scale;
        if gx >= w || gx + GLYPH_PX * scale <= 0 {
            continue;
        }
        for (row, bits) in BASIC_LEGACY[code].iter().enumerate() {
            if *bits == 0 {
                continue;
            }
            for col in 0..GLYPH_PX {
                if (bits >> col) & 1 == 0 {
                    continue;
                }
                for dy in 0..scale {
                    let py = y + row as i32 * scale + dy;
                    if py < 0 || py >= h {
                        continue;
                    }
                    for dx in 0..scale {
                        let px = gx + col * scale + dx;
                        if px >= 0 && px < w {
                            let at = py as usize * stride + px as usize * 4;
                            data[at..at + 4].copy_from_slice(&rgba);
                        }
                    }
                }
            }
        }
    }
}

/// A box `(left, top, right, bottom)` in pixels, edges included.
pub(crate) type BoxPx = (i32, i32, i32, i32);

/// True when two boxes share a pixel, or come closer than `gap` px.
pub(crate) fn overlaps(a: BoxPx, b: BoxPx, gap: i32) -> bool {
    a.0 <= b.2 + gap && b.0 <= a.2 + gap && a.1 <= b.3 + gap && b.1 <= a.3 + gap
}

/// Where [`label`] puts the text's top-left corner and its light box.
pub(crate) fn label_place(x: f32, y: f32, anchor: Anchor, text: &str, scale: i32) -> ((i32, i32), BoxPx) {
    let (tw, th) = (width_px(text, scale), GLYPH_PX * scale);
    let (x, y) = (x.round() as i32, y.round() as i32);
    let (left, top) = match anchor {
        Anchor::TopLeft => (x, y),
        Anchor::MidLeft => (x, y - th / 2),
        Anchor::Centre => (x - tw / 2, y - th / 2),
        Anchor::TopCentre => (x - tw / 2, y),
    };
    let pad = scale + 1;
    ((left, top), (left - pad, top - pad, left + tw + pad - 1, top + th + pad - 1))
}

/// Fills a box with the light colour of labels.
pub(crate) fn light_box(pix: &mut Pixmap, b: BoxPx) {
    if let Some(r) = Rect::from_ltrb(b.0 as f32, b.1 as f32, (b.2 + 1) as f32, (b.3 + 1) as f32) {
        pix.fill_rect(r, &paint([255, 255, 255], 0.82), Transform::identity(), None);
    }
}

/// Draws `text` on a light box so that it stays legible over the map; returns the box.
pub(crate) fn label(
    pix: &mut Pixmap,
    x: f32,
    y: f32,
    anchor: Anchor,
    text: &str,
    scale: i32,
    color: Rgb,
) -> BoxPx {
    let ((left, top), bx) = label_place(x, y, anchor, text, scale);
    light_box(pix, bx);
    draw(pix, left, top, text, scale, color);
    bx
}
