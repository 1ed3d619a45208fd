//! The data of the World pane behind one trait, [`WorldSource`], so that the run log and the
//! episode recording feed the same pane and the same video.
//!
//! [`RunLogSource`] builds a [`WorldData`] from `run.jsonl`: the map (from the maps folder,
//! named by the scenario of the run row), the fields in play, the pose track, the accepted plans
//! (the lane routes of their legs), the route of each goto/return/scout (from its start place to
//! its target over the lane graph, or the Scout loop), the fields scouted, and the blocked places
//! (`shield_hold` events and `returns_on_route` cells). Objects and LiDAR returns are not in
//! `run.jsonl`; [`EpisodeSource`] adds them from the run's `episode.mcap` (see
//! [`super::episode`]). [`WorldData::scene_at`] gives the picture [`Scene`] at a mission time,
//! which the video and the verdict pictures draw with the picture code.

use acres_farm::HOME;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use acres_farm::geom::{Pose, Vec2};
use acres_farm::route::{leg_path, scout_path};
use acres_farm::{LaneGraph, Leg, Map};

use acres_core::objects::ObjectKind;
use acres_farm::geom::Obb;

use super::episode::{EpisodeWorld, ObjectsAt, ReturnsAt};
use super::model::{EventName, RunLog, SkillKind, Timeline};
use crate::runfolder::rows::Row;
use crate::tools::picture::{Around, Region, Scene, View};

/// A point `[x, y]`, m.
pub type Xy = [f64; 2];

/// The vehicle at one pose time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrackPoint {
    /// Mission time, s.
    pub t_s: f64,
    /// East, m.
    pub x_m: f64,
    /// North, m.
    pub y_m: f64,
    /// Heading, rad.
    pub yaw_rad: f64,
    /// Speed, m/s.
    pub speed_mps: f64,
}

/// A path shown from `t0_s` to `t1_s` (`None`: to the end).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimedPath {
    /// From, s.
    pub t0_s: f64,
    /// To, s.
    pub t1_s: Option<f64>,
    /// What it is (`plan F53,F56`, `goto F53`, ...).
    pub label: String,
    /// The polylines.
    pub lines: Vec<Vec<Xy>>,
}

/// A place known from `t_s` on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimedPlace {
    /// Since, s.
    pub t_s: f64,
    /// The place.
    pub at: Xy,
    /// Why (`shield_hold`, `returns_on_route`).
    pub why: String,
}

/// A field of the map as the page draws it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldShape {
    /// The id.
    pub id: String,
    /// The outline.
    pub polygon: Vec<Xy>,
    /// The entry.
    pub entry: Xy,
    /// The Scout loop.
    pub scout_loop: Vec<Xy>,
    /// Whether the field is in play.
    pub in_play: bool,
}

/// The map as the page draws it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapShapes {
    /// The map name.
    pub name: String,
    /// The lane width, m.
    pub lane_width_m: f64,
    /// Lanes as segments.
    pub lanes: Vec<[Xy; 2]>,
    /// The fields.
    pub fields: Vec<FieldShape>,
    /// Home.
    pub home: Xy,
    /// The home yard radius, m.
    pub home_radius_m: f64,
    /// `[min_x, min_y, max_x, max_y]`, m.
    pub bounds: [f64; 4],
}

/// Everything the World pane draws over a run.
#[derive(Debug, Clone, Serialize)]
pub struct WorldData {
    /// Where the data comes from (`run.jsonl`, `run.jsonl + episode.mcap`).
    pub source: String,
    /// The map.
    pub map: MapShapes,
    /// The pose track.
    pub track: Vec<TrackPoint>,
    /// The accepted plans.
    pub plans: Vec<TimedPath>,
    /// The routes of the skills.
    pub routes: Vec<TimedPath>,
    /// The blocked places.
    pub blocked: Vec<TimedPlace>,
    /// The fields scouted, with their time.
    pub scouted: Vec<(f64, String)>,
    /// The objects over time (from the episode recording; empty from `run.jsonl` alone). Each
    /// holds until [`OBJECTS_HOLD_S`] after its time.
    pub objects: Vec<ObjectsAt>,
    /// The LiDAR returns over time (from the episode recording; empty from `run.jsonl` alone).
    /// Each holds until [`RETURNS_HOLD_S`] after its time.
    pub returns: Vec<ReturnsAt>,
    /// What the source cannot show, for the page to say.
    pub missing: Vec<String>,
}

/// How long a set of objects is shown after its time, s (they are recorded each second).
pub const OBJECTS_HOLD_S: f64 = 1.5;
/// How long a scan's returns are shown after its time, s (one is kept each 0.5 s).
pub const RETURNS_HOLD_S: f64 = 1.0;

/// A source of the World pane's data.
pub trait WorldSource {
    /// Builds the data of the whole run (so far).
    fn world(&self) -> WorldData;
}

/// The World pane's data from a run folder's `run.jsonl` and the map.
pub struct RunLogSource<'a> {
    /// The decoded rows.
    pub log: &'a RunLog,
    /// Their grouping.
    pub timeline: &'a Timeline,
    /// The map of the scenario.
    pub map: Arc<Map>,
}

/// The position of a `shield_hold` event (the obstacle, from the sensor).
#[derive(Debug, Deserialize)]
struct HoldDetail {
    x: f64,
    y: f64,
}

/// The field of a `field_scouted` event.
#[derive(Debug, Deserialize)]
struct ScoutedDetail {
    field: String,
}

fn xy(p: Vec2) -> Xy {
    [p.x, p.y]
}

impl WorldSource for RunLogSource<'_> {
    fn world(&self) -> WorldData {
        let map = &*self.map;
        let graph = LaneGraph::new(map);
        let track: Vec<TrackPoint> = self
            .log
            .rows
            .iter()
            .filter_map(|r| match r {
                Row::Pose(p) => {
                    Some(TrackPoint { t_s: p.t, x_m: p.x, y_m: p.y, yaw_rad: p.yaw, speed_mps: p.speed_mps })
                }
                _ => None,
            })
            .collect();
        let mut blocked = Vec::new();
        let mut scouted = Vec::new();
        for r in &self.log.rows {
            match r {
                Row::Event(e) if EventName::of(&e.name) == EventName::ShieldHold => {
                    if let Ok(d) = serde_json::from_value::<HoldDetail>(Value::Object(e.detail.clone())) {
                        blocked.push(TimedPlace { t_s: e.t, at: [d.x, d.y], why: "shield_hold".into() });
                    }
                }
                Row::Event(e) if EventName::of(&e.name) == EventName::FieldScouted => {
                    if let Ok(d) = serde_json::from_value::<ScoutedDetail>(Value::Object(e.detail.clone())) {
                        scouted.push((e.t, d.field));
                    }
                }
                Row::ReturnsOnRoute(c) => blocked.extend(c.cells.iter().map(|&at| TimedPlace {
                    t_s: c.t,
                    at,
                    why: "returns_on_route".into(),
                })),
                _ => {}
            }
        }
        WorldData {
            source: "run.jsonl".into(),
            map: shapes(map, &self.log.run.fields),
            plans: self.plans(map, &graph),
            routes: self.routes(map, &graph, &track),
            track,
            blocked,
            scouted,
            objects: Vec::new(),
            returns: Vec::new(),
            missing: vec!["objects and LiDAR returns (this run folder has no episode.mcap)".into()],
        }
    }
}

/// The World pane's data from `run.jsonl` and the map ([`RunLogSource`]) with the objects and
/// LiDAR returns of the run's episode recording.
pub struct EpisodeSource<'a> {
    /// The run log's part.
    pub log: RunLogSource<'a>,
    /// What the recording gives.
    pub episode: &'a EpisodeWorld,
}

impl WorldSource for EpisodeSource<'_> {
    fn world(&self) -> WorldData {
        let mut w = self.log.world();
        let e = self.episode;
        w.source = format!("run.jsonl + {}", e.file);
        w.objects = e.objects.clone();
        w.returns = e.returns.clone();
        w.missing.clear();
        if e.returns_from.is_empty() {
            w.missing.push(format!("LiDAR returns ({} has neither /scan nor /lidar/points)", e.file));
        }
        if e.objects.is_empty() {
            w.missing.push(format!("objects ({} has no /acres/objects)", e.file));
        }
        w
    }
}

impl RunLogSource<'_> {
    /// Each accepted plan from its verdict to the next accepted one.
    fn plans(&self, map: &Map, graph: &LaneGraph) -> Vec<TimedPath> {
        let accepted: Vec<_> = self.timeline.verdicts.iter().filter(|v| v.accepted).collect();
        accepted
            .iter()
            .enumerate()
            .map(|(i, v)| TimedPath {
                t0_s: v.t_s,
                t1_s: accepted.get(i + 1).map(|n| n.t_s),
                label: format!("plan {}", v.visits.join(",")),
                lines: plan_lines(map, graph, &v.visits, v.return_home),
            })
            .collect()
    }

    /// The route of each skill that drives, from where it started.
    fn routes(&self, map: &Map, graph: &LaneGraph, track: &[TrackPoint]) -> Vec<TimedPath> {
        let mut out = Vec::new();
        for s in &self.timeline.skills {
            let Some(target) = &s.target else { continue };
            let line: Option<Vec<Vec2>> = match s.kind {
                Some(SkillKind::Scout) => scout_path(map, target).map(|p| p.points),
                Some(SkillKind::Goto | SkillKind::ReturnHome) => {
                    let node = if target == HOME {
                        Some(HOME.to_string())
                    } else {
                        map.fields.get(target).map(|f| f.entry.clone())
                    };
                    let from = pose_at(track, s.t0_s).map(|p| p.pos()).unwrap_or_else(|| map.home());
                    node.and_then(|n| graph.route_from_point(from, &n)).map(|p| p.points)
                }
                _ => None,
            };
            if let Some(line) = line {
                out.push(TimedPath {
                    t0_s: s.t0_s,
                    t1_s: s.t1_s,
                    label: format!("{} {target}", s.skill),
                    lines: vec![line.into_iter().map(xy).collect()],
                });
            }
        }
        out
    }
}

/// The lane routes of a plan's legs from home.
pub fn plan_lines(map: &Map, graph: &LaneGraph, visits: &[String], return_home: bool) -> Vec<Vec<Xy>> {
    Leg::mission(visits, return_home)
        .iter()
        .filter_map(|leg| leg_path(map, graph, leg))
        .map(|p| p.points.into_iter().map(xy).collect())
        .collect()
}

fn shapes(map: &Map, in_play: &[String]) -> MapShapes {
    let (lo, hi) = map.bounds();
    MapShapes {
        name: map.name.clone(),
        lane_width_m: map.lane_width_m,
        lanes: map
            .lanes
            .iter()
            .filter_map(|l| Some([xy(*map.nodes.get(&l.from)?), xy(*map.nodes.get(&l.to)?)]))
            .collect(),
        fields: map
            .fields
            .values()
            .map(|f| FieldShape {
                id: f.id.clone(),
                polygon: f.polygon.iter().copied().map(xy).collect(),
                entry: xy(f.entry_pos),
                scout_loop: f.scout_loop.iter().copied().map(xy).collect(),
                in_play: in_play.contains(&f.id),
            })
            .collect(),
        home: xy(map.home()),
        home_radius_m: map.home_radius_m,
        bounds: [lo.x, lo.y, hi.x, hi.y],
    }
}

/// The pose at `t_s`, linear between the pose rows (the heading along the shorter turn); the
/// first or last pose outside the track; `None` for an empty track.
pub fn pose_at(track: &[TrackPoint], t_s: f64) -> Option<Pose> {
    let i = track.partition_point(|p| p.t_s <= t_s);
    let (a, b) = match (i.checked_sub(1).and_then(|j| track.get(j)), track.get(i)) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) => (a, a),
        (None, Some(b)) => (b, b),
        (None, None) => return None,
    };
    let f = if b.t_s > a.t_s { ((t_s - a.t_s) / (b.t_s - a.t_s)).clamp(0.0, 1.0) } else { 0.0 };
    let dyaw = acres_farm::geom::wrap_angle(b.yaw_rad - a.yaw_rad);
    Some(Pose {
        x: a.x_m + (b.x_m - a.x_m) * f,
        y: a.y_m + (b.y_m - a.y_m) * f,
        yaw: acres_farm::geom::wrap_angle(a.yaw_rad + dyaw * f),
    })
}

/// What the world picture centres on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum WorldView {
    /// A circle of [`CHASE_RADIUS_M`] around the vehicle.
    Chase,
    /// The field of the running skill (or around the vehicle when none).
    Field,
    /// The whole map with the whole drive.
    Drive,
}

/// The radius of the chase view, m.
pub const CHASE_RADIUS_M: f64 = 40.0;

/// The radius of the field view when no field is targeted, m.
pub const FIELD_AROUND_RADIUS_M: f64 = 150.0;

fn active(t_s: f64, t0_s: f64, t1_s: Option<f64>) -> bool {
    t0_s <= t_s && t1_s.is_none_or(|t1| t_s < t1)
}

fn to_vec2(line: &[Xy]) -> Vec<Vec2> {
    line.iter().map(|p| Vec2::new(p[0], p[1])).collect()
}

impl WorldData {
    /// The picture scene at mission time `t_s`: the vehicle where the track puts it, the driven
    /// path so far, the plan and route in force, the places blocked so far, the fields scouted.
    pub fn scene_at<'m>(&self, map: &'m Map, tl: &Timeline, t_s: f64, view: WorldView) -> Scene<'m> {
        let skill = tl.skill_at(t_s);
        let region = match view {
            WorldView::Chase => {
                View::Zoom(Region::Around { what: Around::Vehicle, radius_m: Some(CHASE_RADIUS_M) })
            }
            WorldView::Drive => View::Map,
            WorldView::Field => {
                match skill.and_then(|s| s.target.clone()).filter(|f| map.fields.contains_key(f)) {
                    Some(f) => View::Zoom(Region::Field(f)),
                    None => View::Zoom(Region::Around {
                        what: Around::Vehicle,
                        radius_m: Some(FIELD_AROUND_RADIUS_M),
                    }),
                }
            }
        };
        let mut s = Scene::new(map, region);
        s.frame_id = "world".into();
        s.t_s = t_s;
        s.fields_in_play = self.map.fields.iter().filter(|f| f.in_play).map(|f| f.id.clone()).collect();
        s.scouted = self.scouted.iter().filter(|(t, _)| *t <= t_s).map(|(_, f)| f.clone()).collect();
        if let Some(p) = pose_at(&self.track, t_s) {
            s.vehicle = p;
            s.driven =
                self.track.iter().take_while(|q| q.t_s <= t_s).map(|q| Vec2::new(q.x_m, q.y_m)).collect();
            s.driven.push(p.pos());
        }
        if let Some(plan) = self.plans.iter().rev().find(|p| active(t_s, p.t0_s, p.t1_s)) {
            s.plan = plan.lines.iter().map(|l| to_vec2(l)).collect();
        }
        if let Some(r) = self.routes.iter().rev().find(|r| active(t_s, r.t0_s, r.t1_s)) {
            s.route = r.lines.first().map(|l| to_vec2(l)).unwrap_or_default();
        }
        s.blocked =
            self.blocked.iter().filter(|b| b.t_s <= t_s).map(|b| Vec2::new(b.at[0], b.at[1])).collect();
        s.site = s.blocked.last().copied();
        if let Some(o) = latest(&self.objects, |o| o.t_s, t_s, OBJECTS_HOLD_S) {
            s.objects = o
                .objects
                .iter()
                .filter_map(|b| {
                    let kind = serde_json::from_value::<ObjectKind>(Value::String(b.kind.clone())).ok()?;
                    let obb = Obb {
                        center: Vec2::new(b.at[0], b.at[1]),
                        yaw: b.yaw_rad,
                        half_length_m: b.length_m / 2.0,
                        half_width_m: b.width_m / 2.0,
                    };
                    Some((kind, obb))
                })
                .collect();
        }
        if let Some(r) = latest(&self.returns, |r| r.t_s, t_s, RETURNS_HOLD_S) {
            s.returns = r.points.iter().map(|p| Vec2::new(p[0], p[1])).collect();
        }
        s
    }
}

/// The last item at or before `t_s`, when it is at most `hold_s` old.
pub fn latest<T>(items: &[T], t_of: impl Fn(&T) -> f64, t_s: f64, hold_s: f64) -> Option<&T> {
    let i = items.partition_point(|x| t_of(x) <= t_s + 1e-9);
    let item = items.get(i.checked_sub(1)?)?;
    (t_s - t_of(item) <= hold_s).then_some(item)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(t_s: f64, x_m: f64, yaw_rad: f64) -> TrackPoint {
        TrackPoint { t_s, x_m, y_m: 0.0, yaw_rad, speed_mps: 1.0 }
    }

    #[test]
    fn pose_at_interpolates_between_rows_and_turns_the_short_way() {
        let pi = std::f64::consts::PI;
        let track = [tp(0.0, 0.0, pi - 0.1), tp(0.5, 1.0, -pi + 0.1), tp(1.0, 2.0, 0.0)];
        let p = pose_at(&track, 0.25).unwrap();
        assert!((p.x - 0.5).abs() < 1e-12);
        // From just under +pi to just over -pi: through pi, not through 0.
        assert!((p.yaw.abs() - pi).abs() < 1e-9, "{}", p.yaw);
        assert_eq!(pose_at(&track, -1.0).unwrap().x, 0.0);
        assert_eq!(pose_at(&track, 9.0).unwrap().x, 2.0);
        assert!(pose_at(&[], 1.0).is_none());
    }
}
