//! The scouting map: home, lane nodes, lanes, fields with their entries and Scout loops, and the
//! corridor in which every route must stay.
//!
//! The file format is `acres-map-1` (JSON, schema in `ros_pkgs/acres_farm/schemas/map.schema.json`, documented
//! in `docs/map-format.md`). [`Map::load`] reads and checks a file; every error names the file and
//! the JSON path of the fault.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The id of the home node (the yard every mission leaves from and comes back to).
pub const HOME: &str = "H";

use crate::geom::{
    point_in_polygon, polygon_area, polygon_boundary_distance, segment_distance, Polyline, Vec2,
};

/// The schema name a map file must carry.
pub const MAP_SCHEMA: &str = "acres-map-1";

/// A map file as written on disk.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapFile {
    /// Must be [`MAP_SCHEMA`].
    pub schema: String,
    /// The map name (the file stem by convention).
    pub name: String,
    /// Width of every lane, m.
    pub lane_width_m: f64,
    /// The corridor includes each field and this margin around it, m.
    pub field_margin_m: f64,
    /// Radius of the home yard around node `H`, m; it is part of the corridor.
    pub home_radius_m: f64,
    /// Heading of the vehicle when it starts at `H`, rad.
    pub home_yaw_rad: f64,
    /// Default inset of a Scout loop from its field's boundary, m.
    pub scout_inset_m: f64,
    /// Lane nodes, including `H` and every field entry.
    pub nodes: Vec<NodeFile>,
    /// Straight lanes between two nodes; lanes are two-way.
    pub lanes: Vec<LaneFile>,
    /// The fields.
    pub fields: Vec<FieldFile>,
}

/// A lane node on disk.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeFile {
    /// Unique identifier (`H` is home).
    pub id: String,
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
}

/// A lane on disk.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaneFile {
    /// One end node.
    pub from: String,
    /// The other end node.
    pub to: String,
}

/// A field on disk.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldFile {
    /// Unique identifier, e.g. `F53`.
    pub id: String,
    /// The boundary, `[x, y]` vertices of a simple polygon.
    pub polygon: Vec<[f64; 2]>,
    /// The lane node on the boundary where the vehicle enters.
    pub entry: String,
    /// An explicit Scout loop; when absent, the boundary inset by `scout_inset_m`.
    #[serde(default)]
    pub scout_loop: Option<Vec<[f64; 2]>>,
}

/// A field of a loaded map.
#[derive(Debug, Clone)]
pub struct Field {
    /// Identifier.
    pub id: String,
    /// Boundary polygon, counter-clockwise.
    pub polygon: Vec<Vec2>,
    /// Area, ha.
    pub area_ha: f64,
    /// The entry node's identifier.
    pub entry: String,
    /// The entry point.
    pub entry_pos: Vec2,
    /// The closed Scout loop, counter-clockwise, starting at the vertex nearest the entry (the
    /// first point is not repeated at the end).
    pub scout_loop: Vec<Vec2>,
}

impl Field {
    /// The Scout loop as a closed polyline (first point repeated at the end).
    pub fn loop_polyline(&self) -> Polyline {
        let mut pts = self.scout_loop.clone();
        pts.push(self.scout_loop[0]);
        Polyline::new(pts)
    }
    /// Length of the Scout loop, m.
    pub fn loop_length_m(&self) -> f64 {
        self.loop_polyline().length_m()
    }
}

/// A lane of a loaded map.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// One end.
    pub from: String,
    /// Other end.
    pub to: String,
    /// Length, m.
    pub length_m: f64,
}

/// A loaded, checked map.
#[derive(Debug, Clone)]
pub struct Map {
    /// Name.
    pub name: String,
    /// Lane width, m.
    pub lane_width_m: f64,
    /// Corridor margin around fields, m.
    pub field_margin_m: f64,
    /// Home yard radius, m.
    pub home_radius_m: f64,
    /// Heading at home, rad.
    pub home_yaw_rad: f64,
    /// Nodes by identifier.
    pub nodes: BTreeMap<String, Vec2>,
    /// Lanes in file order.
    pub lanes: Vec<Lane>,
    /// Fields by identifier.
    pub fields: BTreeMap<String, Field>,
}

/// A map file that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    /// The file could not be read.
    #[error("{file}: cannot read the map: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a valid map; `path` is the JSON path of the fault.
    #[error("{file}: at {path}: {message}")]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The JSON path, e.g. `fields[3].entry`.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl Map {
    /// Loads and checks a map file.
    pub fn load(file: &Path) -> Result<Map, MapError> {
        let text =
            std::fs::read_to_string(file).map_err(|source| MapError::Io { file: file.into(), source })?;
        Self::parse(&text, file)
    }

    /// Parses and checks map text; `file` is used in error messages only.
    pub fn parse(text: &str, file: &Path) -> Result<Map, MapError> {
        let invalid = |path: String, message: String| MapError::Invalid { file: file.into(), path, message };
        let de = &mut serde_json::Deserializer::from_str(text);
        let mf: MapFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { "$".to_string() } else { path };
            invalid(path, e.into_inner().to_string())
        })?;
        Self::from_file(mf).map_err(|(path, message)| invalid(path, message))
    }

    /// Checks a parsed map file. Errors are `(JSON path, message)`.
    pub fn from_file(mf: MapFile) -> Result<Map, (String, String)> {
        if mf.schema != MAP_SCHEMA {
            return Err(("schema".into(), format!("expected \"{MAP_SCHEMA}\", found \"{}\"", mf.schema)));
        }
        for (key, v) in [
            ("lane_width_m", mf.lane_width_m),
            ("field_margin_m", mf.field_margin_m),
            ("home_radius_m", mf.home_radius_m),
            ("scout_inset_m", mf.scout_inset_m),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err((key.into(), format!("must be a positive number, found {v}")));
            }
        }
        let mut nodes = BTreeMap::new();
        for (i, n) in mf.nodes.iter().enumerate() {
            if !(n.x.is_finite() && n.y.is_finite()) {
                return Err((format!("nodes[{i}]"), "coordinates must be finite".into()));
            }
            if nodes.insert(n.id.clone(), Vec2::new(n.x, n.y)).is_some() {
                return Err((format!("nodes[{i}].id"), format!("node \"{}\" is defined twice", n.id)));
            }
        }
        if !nodes.contains_key(HOME) {
            return Err(("nodes".into(), "there is no home node \"H\"".into()));
        }
        let mut lanes = Vec::new();
        for (i, l) in mf.lanes.iter().enumerate() {
            for (key, id) in [("from", &l.from), ("to", &l.to)] {
                if !nodes.contains_key(id) {
                    return Err((format!("lanes[{i}].{key}"), format!("unknown node \"{id}\"")));
                }
            }
            if l.from == l.to {
                return Err((format!("lanes[{i}]"), "a lane must join two different nodes".into()));
            }
            lanes.push(Lane {
                from: l.from.clone(),
                to: l.to.clone(),
                length_m: nodes[&l.from].dist(nodes[&l.to]),
            });
        }
        let mut fields = BTreeMap::new();
        for (i, f) in mf.fields.iter().enumerate() {
            let at = |k: &str| format!("fields[{i}].{k}");
            if f.polygon.len() < 3 {
                return Err((at("polygon"), "a field needs at least 3 vertices".into()));
            }
            let mut polygon: Vec<Vec2> = f.polygon.iter().map(|p| Vec2::new(p[0], p[1])).collect();
            let area = polygon_area(&polygon);
            if area.abs() < 1.0 {
                return Err((at("polygon"), "the polygon has no area".into()));
            }
            if area < 0.0 {
                polygon.reverse();
            }
            let Some(&entry_pos) = nodes.get(&f.entry) else {
                return Err((at("entry"), format!("unknown node \"{}\"", f.entry)));
            };
            if polygon_boundary_distance(entry_pos, &polygon) > 0.5 {
                return Err((
                    at("entry"),
                    format!("entry node \"{}\" is not on the field's boundary", f.entry),
                ));
            }
            let raw_loop = match &f.scout_loop {
                Some(l) => {
                    let mut l: Vec<Vec2> = l.iter().map(|p| Vec2::new(p[0], p[1])).collect();
                    if l.len() < 3 {
                        return Err((at("scout_loop"), "a Scout loop needs at least 3 vertices".into()));
                    }
                    if polygon_area(&l) < 0.0 {
                        l.reverse();
                    }
                    l
                }
                None => inset_polygon(&polygon, mf.scout_inset_m),
            };
            if let Some(k) = raw_loop.iter().position(|p| !point_in_polygon(*p, &polygon)) {
                return Err((at("scout_loop"), format!("loop vertex {k} lies outside the field")));
            }
            // The edges too (a loop across the notch of an L-shaped field leaves it).
            let mut closed = raw_loop.clone();
            closed.push(raw_loop[0]);
            if let Some(p) =
                Polyline::new(closed).sample(0.5).into_iter().find(|p| !point_in_polygon(*p, &polygon))
            {
                return Err((
                    at("scout_loop"),
                    format!("the loop leaves the field at ({:.1}, {:.1})", p.x, p.y),
                ));
            }
            let scout_loop = start_loop_near(raw_loop, entry_pos);
            let field = Field {
                id: f.id.clone(),
                polygon,
                area_ha: area.abs() / 10_000.0,
                entry: f.entry.clone(),
                entry_pos,
                scout_loop,
            };
            if fields.insert(f.id.clone(), field).is_some() {
                return Err((at("id"), format!("field \"{}\" is defined twice", f.id)));
            }
        }
        let map = Map {
            name: mf.name,
            lane_width_m: mf.lane_width_m,
            field_margin_m: mf.field_margin_m,
            home_radius_m: mf.home_radius_m,
            home_yaw_rad: mf.home_yaw_rad,
            nodes,
            lanes,
            fields,
        };
        let graph = crate::route::LaneGraph::new(&map);
        for (i, f) in mf.fields.iter().enumerate() {
            if graph.shortest_path(HOME, &f.entry).is_none() {
                return Err((format!("fields[{i}].entry"), format!("no lane joins H and \"{}\"", f.entry)));
            }
        }
        Ok(map)
    }

    /// The home position.
    pub fn home(&self) -> Vec2 {
        self.nodes[HOME]
    }

    /// True when `p` lies in the corridor: on a lane (within half its width), in the home yard, or
    /// in a field or within the margin around it.
    pub fn in_corridor(&self, p: Vec2) -> bool {
        if p.dist(self.home()) <= self.home_radius_m {
            return true;
        }
        let half = self.lane_width_m / 2.0;
        if self.lanes.iter().any(|l| segment_distance(p, self.nodes[&l.from], self.nodes[&l.to]).0 <= half) {
            return true;
        }
        self.fields.values().any(|f| {
            point_in_polygon(p, &f.polygon) || polygon_boundary_distance(p, &f.polygon) <= self.field_margin_m
        })
    }

    /// The field whose polygon holds `p`, if any. A point on a field's boundary (within 1 cm),
    /// such as an entry, is not in the field, whichever edge it lies on.
    pub fn field_at(&self, p: Vec2) -> Option<&Field> {
        self.fields
            .values()
            .find(|f| point_in_polygon(p, &f.polygon) && polygon_boundary_distance(p, &f.polygon) > 0.01)
    }

    /// The first point of `path` that leaves the corridor, if any: every vertex and a point every
    /// half metre are checked.
    pub fn first_exit(&self, path: &Polyline) -> Option<Vec2> {
        let mut s_prev = 0.0;
        for (i, v) in path.points.iter().enumerate() {
            let s_here = path.cum_m[i];
            let n = ((s_here - s_prev) / 0.5).ceil() as usize;
            for k in 1..n {
                let p = path.point_at(s_prev + (s_here - s_prev) * k as f64 / n as f64);
                if !self.in_corridor(p) {
                    return Some(p);
                }
            }
            if !self.in_corridor(*v) {
                return Some(*v);
            }
            s_prev = s_here;
        }
        None
    }

    /// The bounding box of everything on the map: `(min, max)`.
    pub fn bounds(&self) -> (Vec2, Vec2) {
        let mut lo = Vec2::new(f64::INFINITY, f64::INFINITY);
        let mut hi = Vec2::new(f64::NEG_INFINITY, f64::NEG_INFINITY);
        let pts = self.nodes.values().chain(self.fields.values().flat_map(|f| f.polygon.iter()));
        for p in pts {
            lo = Vec2::new(lo.x.min(p.x), lo.y.min(p.y));
            hi = Vec2::new(hi.x.max(p.x), hi.y.max(p.y));
        }
        (lo, hi)
    }
}

/// Insets a counter-clockwise simple polygon by `d` metres: each edge moves inwards and adjacent
/// edges are intersected. Fit for the convex and rectilinear shapes of farm fields when `d` is
/// small against their features.
pub fn inset_polygon(poly: &[Vec2], d: f64) -> Vec<Vec2> {
    let n = poly.len();
    let edge = |i: usize| {
        let (a, b) = (poly[i], poly[(i + 1) % n]);
        let dir = b.sub(a).scale(1.0 / b.dist(a));
        let normal = Vec2::new(-dir.y, dir.x); // left of a CCW edge is inside
        (a.add(normal.scale(d)), dir)
    };
    (0..n)
        .map(|i| {
            let (p1, d1) = edge((i + n - 1) % n);
            let (p2, d2) = edge(i);
            let den = d1.cross(d2);
            if den.abs() < 1e-9 {
                p2
            } else {
                let t = p2.sub(p1).cross(d2) / den;
                p1.add(d1.scale(t))
            }
        })
        .collect()
}

/// Rotates the loop so that it starts at the point nearest `entry`, inserting that point as a
/// vertex when it lies inside an edge.
fn start_loop_near(lp: Vec<Vec2>, entry: Vec2) -> Vec<Vec2> {
    let n = lp.len();
    let mut best = (f64::INFINITY, 0usize, 0.0);
    for i in 0..n {
        let (d, t) = segment_distance(entry, lp[i], lp[(i + 1) % n]);
        if d < best.0 - 1e-9 {
            best = (d, i, t);
        }
    }
    let (_, i, t) = best;
    let a = lp[i];
    let b = lp[(i + 1) % n];
    let p = a.add(b.sub(a).scale(t));
    let mut out = vec![p];
    for k in 1..=n {
        let v = lp[(i + k) % n];
        if v.dist(p) > 0.5 && out.last().is_none_or(|q: &Vec2| q.dist(v) > 1e-6) {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_map() -> Map {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/maps/default.json");
        Map::load(&file).unwrap()
    }

    #[test]
    fn default_map_has_ten_fields_of_one_to_six_hectares() {
        let m = default_map();
        let ids: Vec<&str> = m.fields.keys().map(String::as_str).collect();
        assert_eq!(ids, ["F51", "F52", "F53", "F54", "F55", "F56", "F57", "F58", "F59", "F60"]);
        for f in m.fields.values() {
            assert!((0.9..=6.5).contains(&f.area_ha), "{} has {} ha", f.id, f.area_ha);
            assert!(f.scout_loop.iter().all(|p| m.in_corridor(*p)));
            assert!(f.loop_length_m() > 250.0, "{} loop {}", f.id, f.loop_length_m());
        }
        let non_rect = m.fields.values().filter(|f| f.polygon.len() != 4).count();
        assert!(non_rect >= 2);
    }

    #[test]
    fn corridor_holds_lanes_and_not_open_country() {
        let m = default_map();
        assert!(m.in_corridor(m.home()));
        assert!(!m.in_corridor(Vec2::new(0.0, 300.0)));
        for l in &m.lanes {
            let mid = m.nodes[&l.from].add(m.nodes[&l.to]).scale(0.5);
            assert!(m.in_corridor(mid));
        }
    }

    #[test]
    fn bad_maps_name_the_path() {
        let good = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/maps/default.json"),
        )
        .unwrap();
        let cases = [
            (
                good.replacen("\"entry\": \"E51\"", "\"entry\": \"E99\"", 1),
                "fields[0].entry: unknown node \"E99\"",
            ),
            (good.replacen("\"lane_width_m\": 6.0", "\"lane_width_m\": \"6\"", 1), "at lane_width_m:"),
            (
                good.replacen("\"schema\": \"acres-map-1\"", "\"schema\": \"acres-map-0\"", 1),
                "at schema: expected",
            ),
            (good.replacen("\"from\": \"H\"", "\"from\": \"X\"", 1), "lanes[0].from: unknown node \"X\""),
            (
                good.replacen(
                    "\"entry\": \"E54\"",
                    "\"entry\": \"E54\", \"scout_loop\": [[348, -38], [348, -252], [422, -252], [492, -142], [492, -38]]",
                    1,
                ),
                "fields[3].scout_loop: the loop leaves the field at (",
            ),
        ];
        for (text, want) in cases {
            let err = Map::parse(&text, Path::new("m.json")).unwrap_err().to_string();
            assert!(err.starts_with("m.json: at "), "{err}");
            assert!(err.contains(want), "{err} lacks {want}");
        }
    }
}
