//! Plane geometry in metres and radians: points, poses, polylines, polygons and oriented boxes.
//!
//! The map frame is east-north: `x` east, `y` north, yaw counter-clockwise from east.

use serde::{Deserialize, Serialize};

/// A point or a vector in the map frame, metres.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Vec2 {
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
}

impl Vec2 {
    /// A new point.
    pub const fn new(x: f64, y: f64) -> Self {
        Self { x, y }
    }
    /// Vector sum (a method, so call sites read left to right like the rest of this API).
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x + o.x, self.y + o.y)
    }
    /// Vector difference `self - o`.
    #[allow(clippy::should_implement_trait)]
    pub fn sub(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x - o.x, self.y - o.y)
    }
    /// Scaled vector.
    pub fn scale(self, k: f64) -> Vec2 {
        Vec2::new(self.x * k, self.y * k)
    }
    /// Dot product.
    pub fn dot(self, o: Vec2) -> f64 {
        self.x * o.x + self.y * o.y
    }
    /// z of the cross product.
    pub fn cross(self, o: Vec2) -> f64 {
        self.x * o.y - self.y * o.x
    }
    /// Euclidean length.
    pub fn norm(self) -> f64 {
        self.x.hypot(self.y)
    }
    /// Distance to another point.
    pub fn dist(self, o: Vec2) -> f64 {
        self.sub(o).norm()
    }
    /// The unit vector at `yaw_rad`.
    pub fn from_yaw(yaw_rad: f64) -> Vec2 {
        Vec2::new(yaw_rad.cos(), yaw_rad.sin())
    }
    /// Rotated by `yaw_rad` counter-clockwise.
    pub fn rotate(self, yaw_rad: f64) -> Vec2 {
        let (s, c) = yaw_rad.sin_cos();
        Vec2::new(c * self.x - s * self.y, s * self.x + c * self.y)
    }
    /// The heading of this vector, radians.
    pub fn yaw(self) -> f64 {
        self.y.atan2(self.x)
    }
}

/// A place with a heading.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Pose {
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
    /// Heading, rad, counter-clockwise from east.
    pub yaw: f64,
}

impl Pose {
    /// The position part.
    pub fn pos(&self) -> Vec2 {
        Vec2::new(self.x, self.y)
    }
    /// A point given in this pose's frame (x forward, y left), in the map frame.
    pub fn to_map(&self, local: Vec2) -> Vec2 {
        self.pos().add(local.rotate(self.yaw))
    }
    /// A map point in this pose's frame.
    pub fn to_local(&self, p: Vec2) -> Vec2 {
        p.sub(self.pos()).rotate(-self.yaw)
    }
}

/// Wraps an angle to (-π, π].
pub fn wrap_angle(a: f64) -> f64 {
    let mut a = a % std::f64::consts::TAU;
    if a > std::f64::consts::PI {
        a -= std::f64::consts::TAU;
    } else if a <= -std::f64::consts::PI {
        a += std::f64::consts::TAU;
    }
    a
}

/// Distance from `p` to the segment `a`–`b`, and the parameter `t` in [0, 1] of the nearest point.
pub fn segment_distance(p: Vec2, a: Vec2, b: Vec2) -> (f64, f64) {
    let ab = b.sub(a);
    let len2 = ab.dot(ab);
    let t = if len2 <= 1e-12 { 0.0 } else { (p.sub(a).dot(ab) / len2).clamp(0.0, 1.0) };
    (p.dist(a.add(ab.scale(t))), t)
}

/// True when `p` lies inside the simple polygon (even-odd rule).
pub fn point_in_polygon(p: Vec2, poly: &[Vec2]) -> bool {
    let mut inside = false;
    let n = poly.len();
    let mut j = n.wrapping_sub(1);
    for i in 0..n {
        let (a, b) = (poly[i], poly[j]);
        if (a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x {
            inside = !inside;
        }
        j = i;
    }
    inside
}

/// Distance from `p` to the boundary of a closed polygon.
pub fn polygon_boundary_distance(p: Vec2, poly: &[Vec2]) -> f64 {
    let n = poly.len();
    (0..n).map(|i| segment_distance(p, poly[i], poly[(i + 1) % n]).0).fold(f64::INFINITY, f64::min)
}

/// Signed area of a polygon, m² (positive when counter-clockwise).
pub fn polygon_area(poly: &[Vec2]) -> f64 {
    let n = poly.len();
    (0..n).map(|i| poly[i].cross(poly[(i + 1) % n])).sum::<f64>() / 2.0
}

/// A polyline with its cumulative arc lengths.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Polyline {
    /// The vertices.
    pub points: Vec<Vec2>,
    /// `cum_m[i]` is the arc length from the start to `points[i]`.
    pub cum_m: Vec<f64>,
}

impl Polyline {
    /// Builds a polyline, dropping vertices that repeat the previous one.
    pub fn new(points: Vec<Vec2>) -> Self {
        let mut pts: Vec<Vec2> = Vec::with_capacity(points.len());
        for p in points {
            if pts.last().is_none_or(|q| q.dist(p) > 1e-6) {
                pts.push(p);
            }
        }
        let mut cum_m = Vec::with_capacity(pts.len());
        let mut acc = 0.0;
        for i in 0..pts.len() {
            if i > 0 {
                acc += pts[i].dist(pts[i - 1]);
            }
            cum_m.push(acc);
        }
        Self { points: pts, cum_m }
    }
    /// Total length, m.
    pub fn length_m(&self) -> f64 {
        self.cum_m.last().copied().unwrap_or(0.0)
    }
    /// The index of the segment holding arc length `s` (clamped).
    pub fn segment_at(&self, s: f64) -> usize {
        if self.points.len() < 2 {
            return 0;
        }
        match self.cum_m.binary_search_by(|c| c.total_cmp(&s)) {
            Ok(i) => i.min(self.points.len() - 2),
            Err(i) => i.saturating_sub(1).min(self.points.len() - 2),
        }
    }
    /// The point at arc length `s` (clamped to the ends).
    pub fn point_at(&self, s: f64) -> Vec2 {
        match self.points.len() {
            0 => Vec2::default(),
            1 => self.points[0],
            _ => {
                let s = s.clamp(0.0, self.length_m());
                let i = self.segment_at(s);
                let seg = self.cum_m[i + 1] - self.cum_m[i];
                let t = if seg > 0.0 { (s - self.cum_m[i]) / seg } else { 0.0 };
                self.points[i].add(self.points[i + 1].sub(self.points[i]).scale(t))
            }
        }
    }
    /// The heading of the path at arc length `s`.
    pub fn yaw_at(&self, s: f64) -> f64 {
        if self.points.len() < 2 {
            return 0.0;
        }
        let i = self.segment_at(s.clamp(0.0, self.length_m()));
        self.points[i + 1].sub(self.points[i]).yaw()
    }
    /// Nearest point search within the arc-length window `[s_min, s_max]`: returns
    /// `(arc length, distance)` of the nearest point.
    pub fn project_window(&self, p: Vec2, s_min: f64, s_max: f64) -> (f64, f64) {
        if self.points.len() < 2 {
            return (0.0, self.points.first().map_or(f64::INFINITY, |q| q.dist(p)));
        }
        let i0 = self.segment_at(s_min.max(0.0));
        let i1 = self.segment_at(s_max.min(self.length_m()));
        let mut best = (0.0, f64::INFINITY);
        for i in i0..=i1 {
            let (d, t) = segment_distance(p, self.points[i], self.points[i + 1]);
            let s = self.cum_m[i] + t * (self.cum_m[i + 1] - self.cum_m[i]);
            let s = s.clamp(s_min, s_max);
            let d = if s == self.cum_m[i] + t * (self.cum_m[i + 1] - self.cum_m[i]) {
                d
            } else {
                self.point_at(s).dist(p)
            };
            if d < best.1 {
                best = (s, d);
            }
        }
        best
    }
    /// Nearest point on the whole polyline: `(arc length, distance)`.
    pub fn project(&self, p: Vec2) -> (f64, f64) {
        self.project_window(p, 0.0, self.length_m())
    }
    /// Points every `step_m` along the line, ends included.
    pub fn sample(&self, step_m: f64) -> Vec<Vec2> {
        let len = self.length_m();
        let n = (len / step_m).ceil().max(1.0) as usize;
        (0..=n).map(|k| self.point_at(len * k as f64 / n as f64)).collect()
    }
}

/// An oriented rectangle: the footprint of a vehicle or an object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Obb {
    /// Centre, map frame.
    pub center: Vec2,
    /// Heading of the long axis, rad.
    pub yaw: f64,
    /// Half length along the heading, m.
    pub half_length_m: f64,
    /// Half width across the heading, m.
    pub half_width_m: f64,
}

impl Obb {
    /// The four corners, counter-clockwise from front-left... in map frame.
    pub fn corners(&self) -> [Vec2; 4] {
        let (l, w) = (self.half_length_m, self.half_width_m);
        [Vec2::new(l, w), Vec2::new(-l, w), Vec2::new(-l, -w), Vec2::new(l, -w)]
            .map(|c| self.center.add(c.rotate(self.yaw)))
    }
    /// True when the two rectangles overlap (separating axis test).
    pub fn intersects(&self, other: &Obb) -> bool {
        let a = self.corners();
        let b = other.corners();
        let axes = [
            Vec2::from_yaw(self.yaw),
            Vec2::from_yaw(self.yaw + std::f64::consts::FRAC_PI_2),
            Vec2::from_yaw(other.yaw),
            Vec2::from_yaw(other.yaw + std::f64::consts::FRAC_PI_2),
        ];
        for ax in axes {
            let (amin, amax) = project_range(&a, ax);
            let (bmin, bmax) = project_range(&b, ax);
            if amax < bmin || bmax < amin {
                return false;
            }
        }
        true
    }
    /// True when `p` lies inside the rectangle.
    pub fn contains(&self, p: Vec2) -> bool {
        let l = p.sub(self.center).rotate(-self.yaw);
        l.x.abs() <= self.half_length_m && l.y.abs() <= self.half_width_m
    }
    /// The least distance between the two rectangles, m: 0 when they overlap. For two disjoint
    /// convex polygons the nearest pair of points has a corner of one of them, so the least
    /// corner-to-edge distance both ways is exact.
    pub fn distance(&self, other: &Obb) -> f64 {
        if self.intersects(other) {
            return 0.0;
        }
        let (a, b) = (self.corners(), other.corners());
        let mut best = f64::INFINITY;
        for (pts, poly) in [(&a, &b), (&b, &a)] {
            for p in pts {
                for i in 0..4 {
                    best = best.min(segment_distance(*p, poly[i], poly[(i + 1) % 4]).0);
                }
            }
        }
        best
    }
}

fn project_range(pts: &[Vec2; 4], ax: Vec2) -> (f64, f64) {
    pts.iter()
        .map(|p| p.dot(ax))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rectangle_distance_by_hand() {
        let a = Obb { center: Vec2::new(0.0, 0.0), yaw: 0.0, half_length_m: 2.0, half_width_m: 1.0 };
        // Side by side: 10 - 0.3 - 2 = 7.7 m between the faces.
        let p = Obb { center: Vec2::new(10.0, 0.0), yaw: 0.0, half_length_m: 0.3, half_width_m: 0.3 };
        assert!((a.distance(&p) - 7.7).abs() < 1e-12);
        // Corner to corner: (2, 1) to (5, 5) is a 3-4-5 triangle.
        let c = Obb { center: Vec2::new(6.0, 6.0), yaw: 0.0, half_length_m: 1.0, half_width_m: 1.0 };
        assert!((a.distance(&c) - 5.0).abs() < 1e-12);
        // A square turned 45 degrees, its corner towards a's front face: 4 - sqrt(2) - 2.
        let d = Obb {
            center: Vec2::new(4.0, 0.0),
            yaw: std::f64::consts::FRAC_PI_4,
            half_length_m: 1.0,
            half_width_m: 1.0,
        };
        assert!((a.distance(&d) - (2.0 - std::f64::consts::SQRT_2)).abs() < 1e-12);
        // Overlap: 0, both ways.
        let o = Obb { center: Vec2::new(2.2, 0.0), ..p };
        assert_eq!(a.distance(&o), 0.0);
        assert_eq!(o.distance(&a), 0.0);
    }

    #[test]
    fn polyline_point_and_projection() {
        let pl = Polyline::new(vec![Vec2::new(0.0, 0.0), Vec2::new(10.0, 0.0), Vec2::new(10.0, 10.0)]);
        assert_eq!(pl.length_m(), 20.0);
        assert_eq!(pl.point_at(15.0), Vec2::new(10.0, 5.0));
        let (s, d) = pl.project(Vec2::new(12.0, 4.0));
        assert!((s - 14.0).abs() < 1e-9 && (d - 2.0).abs() < 1e-9);
        let (s, _) = pl.project_window(Vec2::new(12.0, 4.0), 0.0, 8.0);
        assert!((s - 8.0).abs() < 1e-9);
    }

    #[test]
    fn boxes_overlap_or_not() {
        let a = Obb { center: Vec2::new(0.0, 0.0), yaw: 0.0, half_length_m: 2.0, half_width_m: 1.0 };
        let b = Obb { center: Vec2::new(3.5, 0.0), yaw: 0.3, half_length_m: 2.0, half_width_m: 1.0 };
        let c = Obb { center: Vec2::new(6.0, 0.0), yaw: 0.3, half_length_m: 2.0, half_width_m: 1.0 };
        assert!(a.intersects(&b));
        assert!(!a.intersects(&c));
        assert!(a.contains(Vec2::new(1.9, 0.9)));
        assert!(!a.contains(Vec2::new(2.1, 0.0)));
    }

    #[test]
    fn polygon_helpers() {
        let sq = [Vec2::new(0.0, 0.0), Vec2::new(10.0, 0.0), Vec2::new(10.0, 10.0), Vec2::new(0.0, 10.0)];
        assert_eq!(polygon_area(&sq), 100.0);
        assert!(point_in_polygon(Vec2::new(5.0, 5.0), &sq));
        assert!(!point_in_polygon(Vec2::new(11.0, 5.0), &sq));
        assert!((polygon_boundary_distance(Vec2::new(5.0, 3.0), &sq) - 3.0).abs() < 1e-12);
        assert!((wrap_angle(3.0 * std::f64::consts::PI) - std::f64::consts::PI).abs() < 1e-12);
    }
}
