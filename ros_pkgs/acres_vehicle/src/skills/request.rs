//! Requests: checked, then started (or rejected with their cause).

use acres_farm::geom::{point_in_polygon, polygon_boundary_distance, Polyline, Vec2};
use acres_farm::route::scout_path;
use acres_farm::HOME;

use crate::follower::Follower;
use crate::trajectory::check_route;

use super::*;

impl SkillServer {
    /// Handles a request at the observed state.
    pub fn request(&mut self, req: &SkillRequest, obs: &Observation) -> Reply {
        self.t_s = obs.t_s;
        self.revision += 1;
        let Some(kind) = req.skill else {
            return self.reject(None, "no skill named".into());
        };
        if let Some(c) = req.speed_cap_mps {
            if !(c.is_finite() && c > 0.0) {
                return self.reject(Some(kind), format!("speed_cap_mps must be a positive number, not {c}"));
            }
        }
        if kind == SkillKind::Stop {
            return self.stop(obs);
        }
        if let Some(r) = &self.running {
            let cause = format!("busy: {} #{} is running; stop it first", r.kind.as_str(), r.id);
            return self.reject(Some(kind), cause);
        }
        match kind {
            SkillKind::Wait => match req.seconds {
                Some(s) if s.is_finite() && s > 0.0 => {
                    let id = self.start_id();
                    self.begin(
                        Running { id, kind, active: Active::Wait { until_s: obs.t_s + s } },
                        EventDetail::Wait { seconds: s },
                    );
                    Reply::started(kind, id, None, None)
                }
                other => self.reject(Some(kind), format!("wait needs seconds > 0, got {other:?}")),
            },
            SkillKind::Goto | SkillKind::ReturnHome => {
                let place = if kind == SkillKind::ReturnHome {
                    HOME.to_string()
                } else {
                    match (&req.field, &req.place) {
                        (Some(f), _) => f.clone(),
                        (None, Some(p)) => p.clone(),
                        (None, None) => {
                            return self.reject(Some(kind), "goto needs a field or a place".into())
                        }
                    }
                };
                let node = if place == HOME || self.map.nodes.contains_key(&place) {
                    place.clone()
                } else if let Some(f) = self.map.fields.get(&place) {
                    f.entry.clone()
                } else {
                    let fields: Vec<&str> = self.map.fields.keys().map(String::as_str).collect();
                    return self.reject(
                        Some(kind),
                        format!(
                            "unknown place \"{place}\"; places are H, the fields ({}) and lane nodes",
                            fields.join(", ")
                        ),
                    );
                };
                let Some(route) = self.route_to(obs.pose.pos(), &node) else {
                    return self.reject(Some(kind), format!("no route to {place}"));
                };
                self.start_motion(kind, route, 0.0, req.speed_cap_mps, place, None, None)
            }
            SkillKind::Scout => {
                let Some(field) = req.field.clone().or_else(|| req.place.clone()) else {
                    return self.reject(Some(kind), "scout needs a field".into());
                };
                let (route, span) = match self.scout_route(&field, obs) {
                    Ok(r) => r,
                    Err(cause) => return self.reject(Some(kind), cause),
                };
                self.start_motion(kind, route, 0.0, req.speed_cap_mps, field.clone(), Some(field), Some(span))
            }
            SkillKind::Resume => {
                let Some((k, old_id, mut m)) = self.interrupted.take() else {
                    return self.reject(Some(kind), "nothing to resume".into());
                };
                let (_, d) = m.follower.path.project_window(
                    obs.pose.pos(),
                    m.follower.s_m - 5.0,
                    m.follower.s_m + 5.0,
                );
                if d > self.opts.max_track_error_m {
                    let cause =
                        format!("the vehicle is {d:.0} m from where {} #{old_id} stopped", k.as_str());
                    self.interrupted = Some((k, old_id, m));
                    return self.reject(Some(kind), cause);
                }
                if req.speed_cap_mps.is_some() {
                    m.cap_mps = req.speed_cap_mps;
                }
                m.hold_since = None;
                m.best_t = obs.t_s;
                m.tracking = false;
                if let Some(l) = &mut m.learned {
                    l.restart(obs.t_s);
                }
                let id = self.start_id();
                let detail = EventDetail::Resumed {
                    resumes: old_id,
                    target: m.target.clone(),
                    remaining_m: m.follower.remaining_m(),
                };
                let route_m = m.follower.remaining_m();
                self.shield.reset();
                self.begin(Running { id, kind: k, active: Active::Motion(Box::new(m)) }, detail);
                self.start_planner();
                Reply::started(k, id, Some(route_m), Some(format!("resumes #{old_id}")))
            }
            SkillKind::Learned => self.start_learned(req, obs),
            SkillKind::Stop => unreachable!("handled above"),
        }
    }

    /// The route of a scout of `field` from the vehicle at its entry, with the arc-length span
    /// of the Scout loop on it; the cause when the field is unknown or the vehicle not at its entry.
    pub(super) fn scout_route(
        &self,
        field: &str,
        obs: &Observation,
    ) -> Result<(Polyline, (f64, f64)), String> {
        let Some(f) = self.map.fields.get(field) else {
            return Err(format!("unknown field \"{field}\""));
        };
        let d = f.entry_pos.dist(obs.pose.pos());
        if d > self.opts.entry_tolerance_m {
            return Err(format!("not at the entry of {field} ({d:.0} m away); goto {field} first"));
        }
        let path = scout_path(&self.map, field).expect("the field exists");
        // The loop starts after the entry-to-loop connector (which may be empty).
        let c0 = f.entry_pos.dist(f.scout_loop[0]);
        let span = (c0, c0 + f.loop_length_m());
        let mut pts = vec![obs.pose.pos()];
        pts.extend(path.points.iter().copied());
        let route = Polyline::new(pts);
        let shift = route.length_m() - path.length_m();
        Ok((route, (span.0 + shift, span.1 + shift)))
    }

    /// Makes `r` the running skill and says so (`skill_started` with `detail`).
    fn begin(&mut self, r: Running, detail: EventDetail) {
        let (id, kind) = (r.id, r.kind);
        self.running = Some(r);
        self.event(EventName::SkillStarted, Some(id), Some(kind), None, None, detail);
    }

    fn start_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A route from a point to a node: via the field's entry when the point is in a field.
    fn route_to(&self, p: Vec2, node: &str) -> Option<Polyline> {
        let in_field = self.map.fields.values().find(|f| {
            (point_in_polygon(p, &f.polygon)
                || polygon_boundary_distance(p, &f.polygon) <= self.map.field_margin_m)
                && f.entry_pos.dist(p) > 0.5
        });
        match in_field {
            Some(f) => {
                let rest = self.graph.route_nodes(&f.entry, node)?;
                let mut pts = vec![p];
                pts.extend(rest.points);
                Some(Polyline::new(pts))
            }
            None => self.graph.route_from_point(p, node),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_motion(
        &mut self,
        kind: SkillKind,
        route: Polyline,
        s_m: f64,
        cap_mps: Option<f64>,
        target: String,
        field: Option<String>,
        loop_span: Option<(f64, f64)>,
    ) -> Reply {
        if let Err(cause) = check_route(&self.map, &route) {
            return self.reject(Some(kind), cause);
        }
        let id = self.start_id();
        let route_m = route.length_m();
        let follower = Follower::new(route, s_m, self.opts.follower);
        self.interrupted = None;
        self.shield.reset();
        let m = Motion {
            follower,
            cap_mps,
            target: target.clone(),
            field,
            loop_span,
            hold_since: None,
            best_s: s_m,
            best_t: self.t_s,
            tracking: false,
            learned: None,
        };
        self.begin(
            Running { id, kind, active: Active::Motion(Box::new(m)) },
            EventDetail::Route { target, route_m },
        );
        self.start_planner();
        Reply::started(kind, id, Some(route_m), None)
    }

    fn stop(&mut self, obs: &Observation) -> Reply {
        match self.running.take() {
            None => Reply {
                accepted: true,
                skill: Some(SkillKind::Stop),
                id: None,
                code: None,
                cause: Some("no skill was running".into()),
                route_m: None,
            },
            Some(r) => {
                let cause = format!("{} #{} stopped on request", r.kind.as_str(), r.id);
                self.finish(r, ResultCode::Stopped, "stop requested".into(), obs.t_s);
                Reply {
                    accepted: true,
                    skill: Some(SkillKind::Stop),
                    id: None,
                    code: None,
                    cause: Some(cause),
                    route_m: None,
                }
            }
        }
    }
}
