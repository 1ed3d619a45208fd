//! Routes over the lane network and the mission legs of a field.
//!
//! A route is a [`Polyline`] in the map frame. Shortest paths use Dijkstra over the lane graph
//! with ties broken by node identifier, so the same map always gives the same routes.

use crate::map::HOME;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::geom::{segment_distance, Polyline, Vec2};
use crate::map::Map;

/// The lane network as an undirected graph.
#[derive(Debug, Clone)]
pub struct LaneGraph {
    nodes: BTreeMap<String, Vec2>,
    adj: BTreeMap<String, Vec<(String, f64)>>,
}

impl LaneGraph {
    /// Builds the graph of a map.
    pub fn new(map: &Map) -> Self {
        let mut adj: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
        for l in &map.lanes {
            adj.entry(l.from.clone()).or_default().push((l.to.clone(), l.length_m));
            adj.entry(l.to.clone()).or_default().push((l.from.clone(), l.length_m));
        }
        for v in adj.values_mut() {
            v.sort_by(|a, b| a.0.cmp(&b.0));
        }
        Self { nodes: map.nodes.clone(), adj }
    }

    /// The node sequence of a shortest path, or `None` when the nodes are not joined.
    pub fn shortest_path(&self, from: &str, to: &str) -> Option<Vec<String>> {
        if !self.nodes.contains_key(from) || !self.nodes.contains_key(to) {
            return None;
        }
        let mut dist: BTreeMap<&str, f64> = BTreeMap::new();
        let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
        let mut done: BTreeSet<&str> = BTreeSet::new();
        dist.insert(from, 0.0);
        loop {
            // The open node with the least distance; ties by identifier (BTreeMap order).
            let cur = dist
                .iter()
                .filter(|(k, _)| !done.contains(*k))
                .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(b.0)))
                .map(|(k, d)| (*k, *d));
            let (u, du) = cur?;
            if u == to {
                break;
            }
            done.insert(u);
            for (v, w) in self.adj.get(u).into_iter().flatten() {
                let nd = du + w;
                if dist.get(v.as_str()).is_none_or(|d| nd < *d - 1e-9) {
                    dist.insert(v, nd);
                    prev.insert(v, u);
                }
            }
        }
        let mut path = vec![to.to_string()];
        let mut cur = to;
        while cur != from {
            cur = prev[cur];
            path.push(cur.to_string());
        }
        path.reverse();
        Some(path)
    }

    /// The polyline of a shortest path between two nodes.
    pub fn route_nodes(&self, from: &str, to: &str) -> Option<Polyline> {
        let ids = self.shortest_path(from, to)?;
        Some(Polyline::new(ids.iter().map(|id| self.nodes[id]).collect()))
    }

    /// A route from any point to a node: the point joins the nearest lane at its nearest point,
    /// then follows the shorter way along the lanes. A point within 0.5 m of a node starts there.
    pub fn route_from_point(&self, p: Vec2, to: &str) -> Option<Polyline> {
        if !self.nodes.contains_key(to) {
            return None;
        }
        if let Some((id, _)) = self.nodes.iter().find(|(_, q)| q.dist(p) <= 0.5) {
            let mut r = self.route_nodes(id, to)?;
            if r.points.is_empty() {
                r = Polyline::new(vec![p]);
            }
            return Some(r);
        }
        let mut best: Option<(f64, &str, &str, f64)> = None;
        for (a, list) in &self.adj {
            for (b, _) in list {
                if a < b {
                    let (d, t) = segment_distance(p, self.nodes[a], self.nodes[b]);
                    if best.is_none_or(|x| d < x.0 - 1e-9) {
                        best = Some((d, a, b, t));
                    }
                }
            }
        }
        let (_, a, b, t) = best?;
        let (pa, pb) = (self.nodes[a], self.nodes[b]);
        let q = pa.add(pb.sub(pa).scale(t));
        let mut candidates = Vec::new();
        for end in [a, b] {
            if let Some(ids) = self.shortest_path(end, to) {
                let mut pts = vec![p, q];
                pts.extend(ids.iter().map(|id| self.nodes[id]));
                candidates.push(Polyline::new(pts));
            }
        }
        candidates.into_iter().min_by(|x, y| x.length_m().total_cmp(&y.length_m()))
    }
}

/// The kind of a mission leg.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LegKind {
    /// From home or a field entry to a field entry.
    Goto,
    /// Around a field's Scout loop, from its entry back to its entry.
    Scout,
    /// From a field entry home.
    Return,
}

/// One leg of a mission.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Leg {
    /// The kind.
    pub kind: LegKind,
    /// Where it starts: `H` or a field identifier (its entry).
    pub from: String,
    /// Where it ends: `H` or a field identifier (its entry).
    pub to: String,
}

impl Leg {
    /// goto from `from` (H or a field) to field `to`.
    pub fn goto(from: &str, to: &str) -> Leg {
        Leg { kind: LegKind::Goto, from: from.into(), to: to.into() }
    }
    /// scout of a field.
    pub fn scout(field: &str) -> Leg {
        Leg { kind: LegKind::Scout, from: field.into(), to: field.into() }
    }
    /// return from a field home.
    pub fn ret(field: &str) -> Leg {
        Leg { kind: LegKind::Return, from: field.into(), to: HOME.into() }
    }
    /// The key of this leg in a cost table: `goto:H>F53`, `scout:F53`, `return:F53>H`.
    pub fn key(&self) -> String {
        match self.kind {
            LegKind::Goto => format!("goto:{}>{}", self.from, self.to),
            LegKind::Scout => format!("scout:{}", self.from),
            LegKind::Return => format!("return:{}>H", self.from),
        }
    }
    /// The legs of a mission: goto each visit in order, scout it, and return home from the last
    /// (when `return_home`).
    pub fn mission(visits: &[String], return_home: bool) -> Vec<Leg> {
        let mut legs = Vec::new();
        let mut at = HOME.to_string();
        for v in visits {
            legs.push(Leg::goto(&at, v));
            legs.push(Leg::scout(v));
            at = v.clone();
        }
        if return_home && at != HOME {
            legs.push(Leg::ret(&at));
        }
        legs
    }
}

/// Where a route starts or ends: home or a field entry.
fn place_node<'m>(map: &'m Map, place: &'m str) -> Option<&'m str> {
    if place == HOME {
        Some(HOME)
    } else {
        map.fields.get(place).map(|f| f.entry.as_str())
    }
}

/// The path of a leg in the map frame.
pub fn leg_path(map: &Map, graph: &LaneGraph, leg: &Leg) -> Option<Polyline> {
    match leg.kind {
        LegKind::Goto | LegKind::Return => {
            graph.route_nodes(place_node(map, &leg.from)?, place_node(map, &leg.to)?)
        }
        LegKind::Scout => Some(scout_path(map, &leg.from)?),
    }
}

/// The path of a scout: from the entry to the start of the Scout loop, once around, and back.
pub fn scout_path(map: &Map, field: &str) -> Option<Polyline> {
    let f = map.fields.get(field)?;
    let mut pts = vec![f.entry_pos];
    pts.extend(f.scout_loop.iter().copied());
    pts.push(f.scout_loop[0]);
    pts.push(f.entry_pos);
    Some(Polyline::new(pts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn map() -> Map {
        Map::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/maps/default.json")).unwrap()
    }

    #[test]
    fn shortest_paths_follow_the_trunk() {
        let m = map();
        let g = LaneGraph::new(&m);
        assert_eq!(g.shortest_path("H", "E53").unwrap(), ["H", "J1", "J2", "E53"]);
        let r = g.route_nodes("E51", "E56").unwrap();
        assert!((r.length_m() - (30.0 + 520.0 + 30.0)).abs() < 1e-9);
        assert!(m.first_exit(&r).is_none());
    }

    #[test]
    fn route_from_a_point_joins_the_nearest_lane() {
        let m = map();
        let g = LaneGraph::new(&m);
        let r = g.route_from_point(Vec2::new(300.0, 1.0), "J1").unwrap();
        assert_eq!(r.points[1], Vec2::new(300.0, 0.0));
        assert_eq!(*r.points.last().unwrap(), Vec2::new(160.0, 0.0));
        assert!((r.length_m() - 141.0).abs() < 1e-9);
    }

    #[test]
    fn mission_legs_and_keys() {
        let legs = Leg::mission(&["F53".into(), "F51".into()], true);
        let keys: Vec<String> = legs.iter().map(Leg::key).collect();
        assert_eq!(keys, ["goto:H>F53", "scout:F53", "goto:F53>F51", "scout:F51", "return:F51>H"]);
        let m = map();
        let g = LaneGraph::new(&m);
        for l in &legs {
            let p = leg_path(&m, &g, l).unwrap();
            assert!(p.length_m() > 50.0);
            assert!(m.first_exit(&p).is_none(), "{} leaves the corridor", l.key());
        }
    }
}
