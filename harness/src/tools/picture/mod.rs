//! Map pictures for the planner and the run folder: PNG images of exactly [`WIDTH`] × [`HEIGHT`]
//! pixels.
//!
//! A picture has a band of 52 px on top (the title with the frame identifier, the mission time
//! and the view; a scale bar with the metres per pixel; the legend) over a square map area of
//! 640 × 640 px with north up and equal metres per pixel in x and y. The map area has a frame
//! with coordinates: faint grid lines, tick marks, and labels `x=…` along the bottom edge and
//! `y=…` along the left edge, in metres of the map frame.
//!
//! The map area shows the corridor (lanes as bands of the lane width, the margins around fields,
//! the home yard), every field (outline and name; fields in play light green, scouted fields dark
//! green with a check mark and "scouted", other fields pale grey), the Scout loops (thin dashes),
//! lane nodes, home (a house and `H`), the accepted plan (orange dashes), the running skill's
//! route (blue), the driven path (dark line), LiDAR returns (magenta dots), blocked places (red
//! squares), sensed objects (purple boxes with their kind), the vehicle (a yellow 5.0 × 2.4 m
//! box with a black nose and a white halo, at least 16 px long) and a highlighted place (a red
//! ring with a text).
//!
//! # Views
//!
//! [`View::Map`] fits the whole map (its bounds and the home yard, with a margin).
//! [`View::Zoom`] shows a [`Region`]: a field's bounding box with a margin, a circle around the
//! vehicle, home or the scene's site ([`DEFAULT_RADIUS_M`] when no radius is given), or a circle
//! given by its centre and radius. The scale is rounded up to 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6 or
//! 8 times a power of ten metres per pixel, so [`Picture::view_box`] and the labels read as round
//! numbers; the view box always holds what was asked. [`view_box`] checks a view without drawing;
//! [`render`] never fails and shows the whole map when the view is not valid, saying so in the
//! title.
//!
//! # The inset
//!
//! A [`View::Map`] scene with an [`Inset`] (every wake-up's picture, and `look` with view `map`)
//! shows the whole map just as high as it needs (a map wider than high; as wide, for one higher
//! than wide) and, on the rest of the map area, an inset at [`Inset::m_per_px`] (or coarser when
//! what it must hold does not fit) around [`Inset::centre`]: the vehicle at [`INSET_M_PER_PX`], or
//! the cells on the route of a `returns_on_route` wake-up at 0.25 m/px. The inset has its own frame with coordinates, a title box with
//! its scale bar and metres per pixel, and draws every layer the map draws; the band's scale and
//! `m/px` stay those of the map. The default map fills 640 × 232 px at 2.5 m/px and the inset the
//! 640 × 408 px below it. When the rest would be under 160 px, the map is drawn alone as without
//! an inset.
//!
//! # Layout
//!
//! - `view`: the view box of a view, the metre ↔ pixel mapping, clipping.
//! - `canvas`: the palette, drawing helpers over `tiny-skia`, the PNG encoder.
//! - `text`: 8 × 8 bitmap text (`font8x8`) at 1× and 2×, on light boxes over the map.
//! - `layers`: the map layers; `frame`: grid, ticks, labels, north arrow, band, scale, legend.
//! - `compare`: [`compare`], two earlier pictures side by side.
//!
//! Each PNG carries `tEXt` chunks `acres-frame`, `acres-t-s`, `acres-view`, `acres-view-box`
//! (`min_x min_y max_x max_y`, m) and `acres-m-per-px`; [`compare`] reads them to label its
//! panels with coordinates. The same scene always gives the same bytes.

pub(crate) mod canvas;
mod compare;
mod frame;
mod layers;
pub(crate) mod text;
mod view;

#[cfg(test)]
mod tests;

use acres_core::objects::ObjectKind;
use acres_farm::geom::{Obb, Pose, Vec2};
use acres_farm::Map;
use tiny_skia::Pixmap;

pub use compare::compare;
pub use view::DEFAULT_RADIUS_M;

/// Width of every picture, px.
pub const WIDTH: u32 = 640;
/// Height of every picture, px: the 52 px band and the 640 px map area.
pub const HEIGHT: u32 = 692;
/// The smallest radius of a zoom, m.
pub const MIN_RADIUS_M: f64 = 5.0;
/// The largest radius of a zoom, m.
pub const MAX_RADIUS_M: f64 = 5000.0;
/// The scale of a map's inset around the vehicle, m/px.
pub const INSET_M_PER_PX: f64 = 0.5;

/// What a map's inset shows: a square around a point.
#[derive(Debug, Clone, PartialEq)]
pub struct Inset {
    /// The centre, map frame.
    pub centre: Vec2,
    /// The side it must hold whole, m (the inset shows more when it has room).
    pub span_m: f64,
    /// The scale it is drawn at, m/px, or the tidy scale that holds `span_m` when that is coarser.
    pub m_per_px: f64,
    /// The inset's title, e.g. `inset: vehicle`.
    pub title: String,
}

/// What a zoom is centred on (also the `around` of `look`'s region, in snake_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Around {
    /// The vehicle's position.
    Vehicle,
    /// Home, node `H`.
    Home,
    /// The scene's [`Scene::site`], e.g. a blocked place.
    Site,
}

/// The part of the map a zoom shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Region {
    /// A field's bounding box with a margin.
    Field(String),
    /// A circle around the vehicle, home or the site.
    Around {
        /// The centre.
        what: Around,
        /// The radius, m; [`DEFAULT_RADIUS_M`] when `None`.
        radius_m: Option<f64>,
    },
    /// A circle given in map coordinates.
    Circle {
        /// Centre, east, m.
        x: f64,
        /// Centre, north, m.
        y: f64,
        /// Radius, m.
        radius_m: f64,
    },
}

/// What a picture shows.
#[derive(Debug, Clone, PartialEq)]
pub enum View {
    /// The whole map.
    Map,
    /// A part of the map.
    Zoom(Region),
}

/// Everything a picture draws, in map coordinates.
#[derive(Debug, Clone)]
pub struct Scene<'a> {
    /// The map.
    pub map: &'a Map,
    /// What to show.
    pub view: View,
    /// The frame identifier for the title, e.g. `f0001`.
    pub frame_id: String,
    /// Mission time, s.
    pub t_s: f64,
    /// The fields in play (light green).
    pub fields_in_play: Vec<String>,
    /// The scouted fields (dark green, "scouted").
    pub scouted: Vec<String>,
    /// The running skill's path (blue); may be empty.
    pub route: Vec<Vec2>,
    /// The accepted plan's legs as polylines (orange dashes); may be empty.
    pub plan: Vec<Vec<Vec2>>,
    /// The driven path (dark line).
    pub driven: Vec<Vec2>,
    /// The vehicle's pose.
    pub vehicle: Pose,
    /// A place of interest for [`Around::Site`], e.g. a blocked place.
    pub site: Option<Vec2>,
    /// Centres of 1 m cells with objects, from the knowledge store (red squares).
    pub blocked: Vec<Vec2>,
    /// LiDAR returns in the map frame (profile vehicle; magenta dots).
    pub returns: Vec<Vec2>,
    /// Sensed objects (profile simulator; purple boxes with their kind).
    pub objects: Vec<(ObjectKind, Obb)>,
    /// A place drawn as a red ring with a text, e.g. the place of a refused plan's verdict.
    pub highlight: Option<(Vec2, String)>,
    /// The inset of a [`View::Map`] (ignored by the other views).
    pub inset: Option<Inset>,
}

impl<'a> Scene<'a> {
    /// A scene with nothing but the map, the vehicle at home and the given view; fill in the rest.
    pub fn new(map: &'a Map, view: View) -> Self {
        let h = map.home();
        Scene {
            map,
            view,
            frame_id: "f0000".into(),
            t_s: 0.0,
            fields_in_play: Vec::new(),
            scouted: Vec::new(),
            route: Vec::new(),
            plan: Vec::new(),
            driven: Vec::new(),
            vehicle: Pose { x: h.x, y: h.y, yaw: map.home_yaw_rad },
            site: None,
            blocked: Vec::new(),
            returns: Vec::new(),
            objects: Vec::new(),
            highlight: None,
            inset: None,
        }
    }
}

/// An encoded picture and the part of the map it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// The PNG bytes, [`WIDTH`] × [`HEIGHT`], 8-bit RGB.
    pub png: Vec<u8>,
    /// The map area shown: `[min_x, min_y, max_x, max_y]`, m.
    pub view_box: [f64; 4],
    /// Metres per pixel of the map area, equal in x and y.
    pub m_per_px: f64,
    /// The inset's view box and metres per pixel, when the picture has one.
    pub inset: Option<([f64; 4], f64)>,
}

/// A drawn but not yet encoded picture; [`render`] is [`draw`] then [`Raster::encode`].
#[derive(Debug, Clone)]
pub struct Raster {
    pixmap: Pixmap,
    viewport: view::Viewport,
    inset: Option<view::Viewport>,
    texts: Vec<(String, String)>,
}

impl Raster {
    /// The map area shown: `[min_x, min_y, max_x, max_y]`, m.
    pub fn view_box(&self) -> [f64; 4] {
        self.viewport.view_box()
    }

    /// Metres per pixel of the map area.
    pub fn m_per_px(&self) -> f64 {
        self.viewport.m_per_px
    }

    /// The image pixel (column, row) of a map point, rounded down; may lie off the image.
    pub fn pixel_of(&self, p: Vec2) -> (i64, i64) {
        let (x, y) = self.viewport.px(p);
        (x.floor() as i64, y.floor() as i64)
    }

    /// The inset's view box and scale, when the picture has an inset.
    pub fn inset(&self) -> Option<([f64; 4], f64)> {
        self.inset.map(|vp| (vp.view_box(), vp.m_per_px))
    }

    /// The image pixel (column, row) of a map point in the inset, rounded down; `None` without an
    /// inset or off it.
    pub fn inset_pixel_of(&self, p: Vec2) -> Option<(i64, i64)> {
        let vp = self.inset?;
        let (x, y) = vp.px(p);
        let (l, t, r, b) = vp.rect_px();
        (x >= l && x < r && y >= t && y < b).then(|| (x.floor() as i64, y.floor() as i64))
    }

    /// The fraction of the image that shows the map: the map's own bounds and home yard in the
    /// map area, plus the inset, over the whole picture (band included).
    pub fn map_fraction(&self, map: &Map) -> f64 {
        let (lo, hi) = view::map_extent(map);
        let (a, b) = (self.viewport.px(Vec2::new(lo.x, hi.y)), self.viewport.px(Vec2::new(hi.x, lo.y)));
        let (l, t, r, bt) = self.viewport.rect_px();
        let w = (b.0.min(r) - a.0.max(l)).max(0.0);
        let h = (b.1.min(bt) - a.1.max(t)).max(0.0);
        let inset = self.inset.map_or(0.0, |vp| vp.width_px * vp.height_px);
        f64::from(w * h + inset) / f64::from(WIDTH * HEIGHT)
    }

    /// The drawn pixels (the video places them in its frame).
    pub fn pixmap(&self) -> &Pixmap {
        &self.pixmap
    }

    /// The RGB colour of an image pixel, or `None` off the image.
    pub fn rgb(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        let c = self.pixmap.pixel(x, y)?.demultiply();
        Some([c.red(), c.green(), c.blue()])
    }

    /// Encodes the PNG (8-bit RGB, fast deflate, Sub filter, `tEXt` metadata).
    pub fn encode(&self) -> Picture {
        let png = canvas::encode_png(&self.pixmap, &self.texts)
            .expect("a 640 x 692 RGB image with Latin-1 keywords always encodes into memory");
        Picture { png, view_box: self.view_box(), m_per_px: self.m_per_px(), inset: self.inset() }
    }
}

/// A view or a picture that cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum PictureError {
    /// A zoom on a field that the map does not have.
    #[error("the map has no field \"{field}\"")]
    UnknownField {
        /// The field asked for.
        field: String,
    },
    /// A zoom around the site when the scene has none.
    #[error("there is no site to look around")]
    NoSite,
    /// A zoom radius out of range.
    #[error("radius_m must be between {min_m} and {max_m} m, found {radius_m}")]
    BadRadius {
        /// The radius asked for, m.
        radius_m: f64,
        /// The smallest radius, m.
        min_m: f64,
        /// The largest radius, m.
        max_m: f64,
    },
    /// A zoom centre that is not a finite point.
    #[error("the centre ({x}, {y}) is not a finite point")]
    BadCentre {
        /// East, m.
        x: f64,
        /// North, m.
        y: f64,
    },
    /// An input of [`compare`] that is not a readable PNG.
    #[error("picture {which} is not a readable PNG: {message}")]
    BadPng {
        /// The label of the picture.
        which: String,
        /// What the decoder said.
        message: String,
    },
    /// The comparison could not be encoded.
    #[error("cannot encode the picture: {message}")]
    Encode {
        /// What the encoder said.
        message: String,
    },
}

/// The map area a scene's view shows, `[min_x, min_y, max_x, max_y]` in metres, or why the view
/// is not valid (an unknown field, no site, a radius out of range, a centre that is not finite).
pub fn view_box(scene: &Scene) -> Result<[f64; 4], PictureError> {
    let wanted = view::resolve(scene)?;
    Ok(view::fit(&wanted, 0.0, frame::BAND_PX as f32, WIDTH as f32).view_box())
}

/// Draws a scene without encoding it. A view that is not valid shows the whole map, and the title
/// says why.
pub fn draw(scene: &Scene) -> Raster {
    let wanted = view::resolve(scene).unwrap_or_else(|e| {
        let mut whole = view::whole_map(scene.map);
        whole.title = format!("map ({e})");
        whole
    });
    let area = (0.0, frame::BAND_PX as f32, WIDTH as f32);
    let split = match (&scene.view, &scene.inset) {
        (View::Map, Some(inset)) => view::split(scene.map, inset, area).map(|s| (s, inset)),
        _ => None,
    };
    let (wanted, vp, inset) = match split {
        Some(((whole, main, inset_vp), inset)) => (whole, main, Some((inset_vp, inset))),
        None => {
            let vp = view::fit(&wanted, area.0, area.1, area.2);
            (wanted, vp, None)
        }
    };
    let mut pix = Pixmap::new(WIDTH, HEIGHT).expect("640 x 692 is a valid pixmap size");
    map_area(&mut pix, &vp, scene, &[]);
    if let Some((ivp, inset)) = inset {
        frame::inset(&mut pix, &ivp, &inset.title, |p, at_origin, keep| map_area(p, at_origin, scene, keep));
    }
    let head = format!("{} t={:.1} s", scene.frame_id, scene.t_s);
    frame::band(&mut pix, &vp, &head, &wanted.title);
    let [x0, y0, x1, y1] = vp.view_box();
    let mut texts = vec![
        ("acres-frame", scene.frame_id.clone()),
        ("acres-t-s", format!("{:.3}", scene.t_s)),
        ("acres-view", wanted.title.clone()),
        ("acres-view-box", format!("{x0} {y0} {x1} {y1}")),
        ("acres-m-per-px", format!("{}", vp.m_per_px)),
    ];
    if let Some((ivp, inset)) = inset {
        let [x0, y0, x1, y1] = ivp.view_box();
        texts.push(("acres-inset", inset.title.clone()));
        texts.push(("acres-inset-view-box", format!("{x0} {y0} {x1} {y1}")));
        texts.push(("acres-inset-m-per-px", format!("{}", ivp.m_per_px)));
        let (l, t, r, b) = ivp.rect_px();
        texts.push(("acres-inset-px", format!("{l} {t} {r} {b}")));
    }
    let texts = texts.into_iter().map(|(k, v)| (k.to_string(), latin1(&v))).collect();
    Raster { pixmap: pix, viewport: vp, inset: inset.map(|(ivp, _)| ivp), texts }
}

/// Draws the map layers and the frame of one map area; `keep_out` are boxes the frame's labels
/// leave free.
fn map_area(pix: &mut Pixmap, vp: &view::Viewport, scene: &Scene, keep_out: &[text::BoxPx]) {
    let (l, t, r, b) = vp.rect_px();
    canvas::fill_rect(pix, l, t, r, b, canvas::palette::GROUND, 1.0);
    frame::grid(pix, vp);
    layers::corridor(pix, vp, scene);
    layers::fields(pix, vp, scene);
    layers::nodes(pix, vp, scene);
    let mut keep = keep_out.to_vec();
    keep.push(layers::home(pix, vp, scene));
    layers::paths(pix, vp, scene);
    layers::sensed(pix, vp, scene);
    layers::objects(pix, vp, scene);
    layers::labels(pix, vp, scene);
    keep.push(layers::vehicle(pix, vp, &scene.vehicle));
    if let Some((place, what)) = &scene.highlight {
        keep.push(layers::highlight(pix, vp, *place, what));
    }
    frame::frame(pix, vp, frame::grid_step_m(vp), &keep);
}

/// `s` with every character outside printable ASCII replaced by `?`, fit for a `tEXt` chunk.
fn latin1(s: &str) -> String {
    s.chars().map(|c| if (' '..='~').contains(&c) { c } else { '?' }).collect()
}

/// Draws and encodes a scene: a PNG of [`WIDTH`] × [`HEIGHT`], its view box and scale.
pub fn render(scene: &Scene) -> Picture {
    draw(scene).encode()
}
