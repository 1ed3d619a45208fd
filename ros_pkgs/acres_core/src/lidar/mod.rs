//! The multi-ring spinning LiDAR: a deterministic raycast against object boxes and flat ground.
//!
//! The sensor sits `mount_forward_m` ahead of the vehicle pose and `mount_height_m` above the
//! ground, with the vehicle's yaw. One [`Lidar::sweep`] casts one ray per (azimuth column, ring):
//! columns go from bearing `COLUMN_OFFSET` steps (just left of forward) counter-clockwise in
//! steps of `360 / n` degrees, where
//! `n = round(360 / azimuth_step_deg)`; rings are evenly spaced from `min_elevation_deg` to
//! `max_elevation_deg`. A ray returns its nearest hit within `max_range_m` (measured along the
//! ray) among the ground plane `z = 0` and the bodies (boxes standing on the ground); a ray with
//! no hit gives no point.
//!
//! Points are written in the sensor frame (x forward, y left, z up, origin at the sensor),
//! azimuth-major and ring-minor with ascending elevation; intensity is 0.2 for ground and 0.8
//! for objects.
//!
//! Speed: the ground is flat, so the ground returns are the same in the sensor frame for every
//! sweep. [`Lidar::new`] precomputes them as a template; a sweep copies the template column
//! blocks and raycasts only the azimuth columns inside the bearing interval of a body in range.
//! A sweep allocates nothing once `out.points` has grown to size (a scene with more than
//! sixteen bodies in range allocates one small scratch vector).
//!
//! Limits: a ray that starts inside a box (the sensor inside a body) does not hit that box;
//! `rate_hz` is informational, the caller decides when to sweep.

use acres_farm::geom::{Pose, Vec2};

use crate::objects::Body;

/// Columns sit a quarter step off the whole multiples of the step (column `j` at bearing
/// `(j + 0.25) · step`): with a 0.5° step no return falls on a scan bin edge (x.5°), where two
/// implementations of the scan function could round it to different bins.
pub const COLUMN_OFFSET: f64 = 0.25;

/// Intensity of a ground return.
pub const GROUND_INTENSITY: f32 = 0.2;
/// Intensity of an object return.
pub const OBJECT_INTENSITY: f32 = 0.8;

/// The sensor's geometry and timing.
#[derive(Debug, Clone, PartialEq)]
pub struct LidarConfig {
    /// Number of rings (default 16).
    pub rings: usize,
    /// Elevation of the lowest ring, degrees (default -15); at most `max_elevation_deg`.
    pub min_elevation_deg: f64,
    /// Elevation of the highest ring, degrees (default +15); rings are evenly spaced.
    pub max_elevation_deg: f64,
    /// Azimuth step, degrees (default 0.5); the column count is `round(360 / step)`.
    pub azimuth_step_deg: f64,
    /// Maximum range along the ray, m (default 40).
    pub max_range_m: f64,
    /// Sweeps per second (default 10); informational.
    pub rate_hz: f64,
    /// Height of the sensor above ground, m (default 2.2).
    pub mount_height_m: f64,
    /// Distance of the sensor ahead of the vehicle pose, m (default 1.0).
    pub mount_forward_m: f64,
}

impl Default for LidarConfig {
    fn default() -> Self {
        Self {
            rings: 16,
            min_elevation_deg: -15.0,
            max_elevation_deg: 15.0,
            azimuth_step_deg: 0.5,
            max_range_m: 40.0,
            rate_hz: 10.0,
            mount_height_m: 2.2,
            mount_forward_m: 1.0,
        }
    }
}

/// One sweep's returns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sweep {
    /// Simulated time of the sweep, s.
    pub stamp_s: f64,
    /// `[x, y, z, intensity]` in the sensor frame (x forward, y left, z up, origin at the sensor).
    pub points: Vec<[f32; 4]>,
    /// Sorted identifiers of the bodies with at least one return.
    pub seen: Vec<u32>,
}

/// A ring's precomputed trigonometry.
#[derive(Debug, Clone, Copy)]
struct Ring {
    /// cos(elevation): horizontal distance per metre along the ray.
    cos_el: f64,
    /// sin(elevation): height per metre along the ray.
    sin_el: f64,
    /// tan(elevation): height per metre of horizontal distance.
    tan_el: f64,
    /// Range along the ray to the ground, m; infinite when the ground is out of range or above.
    ground_t_m: f64,
}

/// A body prepared for raycasting, in the sensor frame.
#[derive(Debug, Clone, Copy, Default)]
struct Target {
    /// Sensor position in the box frame (x along the box's length, y across).
    origin: Vec2,
    /// Cosine and sine of (vehicle yaw - box yaw): rotates sensor-frame directions into the box frame.
    cos_rel: f64,
    sin_rel: f64,
    half_length_m: f64,
    half_width_m: f64,
    height_m: f64,
    id: u32,
}

impl Target {
    fn new(sensor: Pose, body: &Body) -> Self {
        let obb = &body.obb;
        let (sin_rel, cos_rel) = (sensor.yaw - obb.yaw).sin_cos();
        Target {
            origin: sensor.pos().sub(obb.center).rotate(-obb.yaw),
            cos_rel,
            sin_rel,
            half_length_m: obb.half_length_m,
            half_width_m: obb.half_width_m,
            height_m: body.height_m,
            id: body.id,
        }
    }
}

/// A run of azimuth columns `[start, end)` that may hit the body `target`.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: usize,
    end: usize,
    target: Target,
    /// Horizontal entry and exit distances of the column being cast (a miss: entry > exit).
    slab: (f64, f64),
    hit: bool,
}

impl Span {
    fn new(start: usize, end: usize, target: Target) -> Self {
        Self { start, end, target, slab: (0.0, 0.0), hit: false }
    }
}

/// How many spans fit in the stack scratch before a sweep allocates.
const STACK_SPANS: usize = 16;

/// The LiDAR: configuration plus the precomputed ring, column and ground tables.
#[derive(Debug, Clone)]
pub struct Lidar {
    cfg: LidarConfig,
    rings: Vec<Ring>,
    /// `(cos, sin)` of each column's bearing.
    columns: Vec<(f64, f64)>,
    /// Ground points of one column, per column: `columns.len() * ground_per_column` points.
    template: Vec<[f32; 4]>,
    ground_per_column: usize,
}

impl Lidar {
    /// Builds the sensor and its ground template.
    pub fn new(cfg: LidarConfig) -> Self {
        let h = cfg.mount_height_m;
        let (lo, hi) = (cfg.min_elevation_deg, cfg.max_elevation_deg);
        let rings: Vec<Ring> = (0..cfg.rings)
            .map(|i| {
                let el_deg =
                    if cfg.rings > 1 { lo + (hi - lo) * i as f64 / (cfg.rings - 1) as f64 } else { lo };
                let (sin_el, cos_el) = el_deg.to_radians().sin_cos();
                let ground_t_m = if sin_el < 0.0 { h / -sin_el } else { f64::INFINITY };
                let ground_t_m = if ground_t_m <= cfg.max_range_m { ground_t_m } else { f64::INFINITY };
                Ring { cos_el, sin_el, tan_el: sin_el / cos_el, ground_t_m }
            })
            .collect();
        let n = ((360.0 / cfg.azimuth_step_deg).round() as usize).max(1);
        let columns: Vec<(f64, f64)> = (0..n)
            .map(|j| {
                let (s, c) = (std::f64::consts::TAU * (j as f64 + COLUMN_OFFSET) / n as f64).sin_cos();
                (c, s)
            })
            .collect();
        let ground_per_column = rings.iter().filter(|r| r.ground_t_m.is_finite()).count();
        let mut template = Vec::with_capacity(n * ground_per_column);
        for &(ca, sa) in &columns {
            for r in rings.iter().filter(|r| r.ground_t_m.is_finite()) {
                template.push(point(r, ca, sa, r.ground_t_m, GROUND_INTENSITY));
            }
        }
        Self { cfg, rings, columns, template, ground_per_column }
    }

    /// The configuration.
    pub fn config(&self) -> &LidarConfig {
        &self.cfg
    }

    /// Number of azimuth columns per sweep.
    pub fn columns(&self) -> usize {
        self.columns.len()
    }

    /// One sweep from `vehicle` (the vehicle's pose on the ground) against `bodies`, written into
    /// `out` (its vectors are cleared and reused). The sensor is at
    /// `vehicle.to_map(Vec2(mount_forward_m, 0))`, `mount_height_m` up, with the vehicle's yaw.
    pub fn sweep(&self, vehicle: Pose, bodies: &[Body], stamp_s: f64, out: &mut Sweep) {
        out.stamp_s = stamp_s;
        out.points.clear();
        out.seen.clear();
        let sensor_xy = vehicle.to_map(Vec2::new(self.cfg.mount_forward_m, 0.0));
        let sensor = Pose { x: sensor_xy.x, y: sensor_xy.y, yaw: vehicle.yaw };

        // Spans of columns to raycast; on the stack unless the scene is crowded.
        let mut stack = [Span::default(); STACK_SPANS];
        let mut heap: Vec<Span> = Vec::new();
        let mut count = 0usize;
        for body in bodies {
            let mut push = |span: Span| {
                if count < STACK_SPANS {
                    stack[count] = span;
                } else {
                    if heap.is_empty() {
                        heap.extend_from_slice(&stack);
                    }
                    heap.push(span);
                }
                count += 1;
            };
            self.body_spans(sensor, body, &mut push);
        }
        let spans: &mut [Span] = if count <= STACK_SPANS { &mut stack[..count] } else { &mut heap };
        spans.sort_unstable_by_key(|s| s.start);

        let g = self.ground_per_column;
        let mut col = 0usize;
        let mut i = 0usize;
        while i < spans.len() {
            // Merge the overlapping spans starting here into one busy run of columns.
            let start = spans[i].start;
            let mut end = spans[i].end;
            let mut k = i + 1;
            while k < spans.len() && spans[k].start < end {
                end = end.max(spans[k].end);
                k += 1;
            }
            out.points.extend_from_slice(&self.template[col * g..start * g]);
            for j in start..end {
                self.cast_column(j, &mut spans[i..k], &mut out.points);
            }
            col = end;
            i = k;
        }
        out.points.extend_from_slice(&self.template[col * g..]);

        for s in spans.iter().filter(|s| s.hit) {
            out.seen.push(s.target.id);
        }
        out.seen.sort_unstable();
        out.seen.dedup();
    }

    /// The column spans (one, or two across the wrap at column 0) of a body within range.
    fn body_spans(&self, sensor: Pose, body: &Body, push: &mut impl FnMut(Span)) {
        let obb = &body.obb;
        let target = Target::new(sensor, body);
        let origin = target.origin;
        let gap_x = (origin.x.abs() - obb.half_length_m).max(0.0);
        let gap_y = (origin.y.abs() - obb.half_width_m).max(0.0);
        if gap_x.hypot(gap_y) > self.cfg.max_range_m || body.height_m <= 0.0 {
            return;
        }
        let n = self.columns.len();
        if gap_x == 0.0 && gap_y == 0.0 {
            // The sensor stands over (or in) the footprint: every bearing may hit.
            push(Span::new(0, n, target));
            return;
        }
        // Bearings of the corners relative to the bearing of the centre: a convex footprint
        // not containing the sensor subtends less than 180°, so no wrap inside the interval.
        let centre = sensor.to_local(obb.center);
        let c_bearing = centre.yaw();
        let (mut lo, mut hi) = (0.0f64, 0.0f64);
        for corner in obb.corners() {
            let d = acres_farm::geom::wrap_angle(sensor.to_local(corner).yaw() - c_bearing);
            lo = lo.min(d);
            hi = hi.max(d);
        }
        let per_col = n as f64 / std::f64::consts::TAU;
        let first = ((c_bearing + lo) * per_col - COLUMN_OFFSET - 1e-9).ceil() as i64;
        let last = ((c_bearing + hi) * per_col - COLUMN_OFFSET + 1e-9).floor() as i64;
        let len = last - first + 1;
        if len <= 0 {
            return;
        }
        if len as usize >= n {
            push(Span::new(0, n, target));
            return;
        }
        let start = first.rem_euclid(n as i64) as usize;
        let end = start + len as usize;
        if end <= n {
            push(Span::new(start, end, target));
        } else {
            push(Span::new(start, n, target));
            push(Span::new(0, end - n, target));
        }
    }

    /// Casts every ring of column `j` against the ground and the spans covering it.
    fn cast_column(&self, j: usize, spans: &mut [Span], points: &mut Vec<[f32; 4]>) {
        let (ca, sa) = self.columns[j];
        let h = self.cfg.mount_height_m;
        for span in spans.iter_mut() {
            span.slab = if (span.start..span.end).contains(&j) {
                horizontal_slab(&span.target, ca, sa)
            } else {
                (f64::INFINITY, f64::NEG_INFINITY)
            };
        }
        for ring in &self.rings {
            let mut best_t = ring.ground_t_m;
            let mut best: Option<usize> = None;
            for (k, span) in spans.iter().enumerate() {
                let (s_in, s_out) = span.slab;
                if let Some(t) = enter_box(s_in, s_out, h, span.target.height_m, ring) {
                    if t < best_t {
                        best_t = t;
                        best = Some(k);
                    }
                }
            }
            if best_t <= self.cfg.max_range_m {
                let intensity = match best {
                    Some(k) => {
                        spans[k].hit = true;
                        OBJECT_INTENSITY
                    }
                    None => GROUND_INTENSITY,
                };
                points.push(point(ring, ca, sa, best_t, intensity));
            }
        }
    }
}

/// A point at range `t_m` along the ray of `ring` at bearing `(cos, sin) = (ca, sa)`.
fn point(ring: &Ring, ca: f64, sa: f64, t_m: f64, intensity: f32) -> [f32; 4] {
    let horiz = t_m * ring.cos_el;
    [(horiz * ca) as f32, (horiz * sa) as f32, (t_m * ring.sin_el) as f32, intensity]
}

/// The horizontal slab test of a bearing against a box footprint: the horizontal distances at
/// which the ray's ground track enters and leaves the footprint (`enter > exit` when it misses).
fn horizontal_slab(t: &Target, ca: f64, sa: f64) -> (f64, f64) {
    // Bearing direction in the box frame.
    let ux = t.cos_rel * ca - t.sin_rel * sa;
    let uy = t.sin_rel * ca + t.cos_rel * sa;
    let (ax_in, ax_out) = slab_1d(t.origin.x, ux, t.half_length_m);
    let (ay_in, ay_out) = slab_1d(t.origin.y, uy, t.half_width_m);
    (ax_in.max(ay_in), ax_out.min(ay_out))
}

/// Parameter interval where `o + s * u` lies in `[-half, half]`.
fn slab_1d(o: f64, u: f64, half: f64) -> (f64, f64) {
    if u.abs() < 1e-12 {
        if o.abs() <= half {
            (f64::NEG_INFINITY, f64::INFINITY)
        } else {
            (f64::INFINITY, f64::NEG_INFINITY)
        }
    } else {
        let a = (-half - o) / u;
        let b = (half - o) / u;
        (a.min(b), a.max(b))
    }
}

/// Range along the ray where it enters the box, given the horizontal entry/exit distances,
/// the sensor height `h` and the box height: the side faces or the top face. `None` on a miss
/// or when the ray starts inside the box.
fn enter_box(s_in: f64, s_out: f64, h: f64, height_m: f64, ring: &Ring) -> Option<f64> {
    if s_in > s_out || s_out <= 0.0 {
        return None;
    }
    // Horizontal distances where the ray's height is within [0, height].
    let m = ring.tan_el;
    let (z_in, z_out) = if m == 0.0 {
        if (0.0..=height_m).contains(&h) {
            (f64::NEG_INFINITY, f64::INFINITY)
        } else {
            return None;
        }
    } else {
        let a = -h / m;
        let b = (height_m - h) / m;
        (a.min(b), a.max(b))
    };
    let enter = s_in.max(z_in);
    let exit = s_out.min(z_out);
    if enter > exit || enter <= 0.0 {
        return None;
    }
    Some(enter / ring.cos_el)
}

#[cfg(test)]
mod tests;
