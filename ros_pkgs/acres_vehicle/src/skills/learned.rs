//! Learned skills in the skill server: a request starts one as a motion along its reference
//! route (checked by the trajectory checker like every route); each tick [`SkillServer::learned_command`]
//! checks its bounds in order — `max_s` (`timeout`), the scope (`region_exit`), the success
//! predicate (`succeeded`) — then runs the policy on the observation. A policy error, a
//! non-finite command or a tick over the policy's wall-time budget ends it `reactive_fault`;
//! a command outside the vehicle's limits is refused by the shield (never clamped) and ends it
//! `failed`; otherwise the command goes to the shield like any motion's.
//!
//! The budget is the one wall-clock reading in the server. It is generous by default (50 ms
//! against microseconds of inference), so it never decides a normal run and the in-process
//! world stays deterministic; a skill may set its own (`tick_budget_ms`).

use std::sync::Arc;
use std::time::Instant;

use acres_farm::geom::{point_in_polygon, polygon_boundary_distance, Vec2};
use serde_json::Value;

use crate::follower::Twist;
use crate::learned::observe::{observe, ObsInput};
use crate::learned::spec::RouteKind;
use crate::learned::LearnedSkill;
use crate::shield::within_limits;

use super::*;

/// A running learned skill's own state.
#[derive(Debug, Clone)]
pub(super) struct LearnedRun {
    skill: Arc<LearnedSkill>,
    /// The speed cap the policy sees, m/s.
    cap_mps: f64,
    /// Its scope, resolved.
    scope: Scope,
    /// When it (or its resume) started, s.
    started_s: f64,
}

#[derive(Debug, Clone)]
enum Scope {
    Field { id: String, margin_m: f64 },
    Circle { centre: Vec2, radius_m: f64 },
}

impl LearnedRun {
    /// A resume starts the bound again: `max_s` counts from now.
    pub(super) fn restart(&mut self, t_s: f64) {
        self.started_s = t_s;
    }

    /// A link hold of `held_s` does not count against `max_s`.
    pub(super) fn shift(&mut self, held_s: f64) {
        self.started_s += held_s;
    }
}

impl SkillServer {
    /// Starts the learned skill a request names, or rejects the request with its cause.
    pub(super) fn start_learned(&mut self, req: &SkillRequest, obs: &Observation) -> Reply {
        let kind = SkillKind::Learned;
        let Some(name) = &req.name else {
            return self.reject(Some(kind), "a learned skill request needs the skill's name".into());
        };
        let Some(skill) = self.learned.iter().find(|s| s.name() == name).cloned() else {
            let names: Vec<&str> = self.learned.iter().map(|s| s.name()).collect();
            let words: Vec<&str> = SkillKind::ALL.iter().map(|k| k.as_str()).collect();
            let cause = format!(
                "unknown skill \"{name}\"; skills are {} and this scenario's learned skills ({})",
                words[..6].join(", "),
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            );
            return self.reject(Some(kind), cause);
        };
        if let Err(cause) = check_arguments(&skill.spec.arguments, req) {
            return self.reject(Some(kind), format!("{name}: {cause}"));
        }
        let spec = &skill.spec;
        let field = req.field.clone().or_else(|| req.place.clone());
        let scope = match (&spec.scope.field, spec.scope.radius_m) {
            (Some(f), _) => {
                let id = if f == "$field" { field.clone().unwrap_or_default() } else { f.clone() };
                if !self.map.fields.contains_key(&id) {
                    return self.reject(Some(kind), format!("{name}: unknown field \"{id}\""));
                }
                Scope::Field { id, margin_m: spec.scope.margin_m }
            }
            (None, r) => Scope::Circle { centre: obs.pose.pos(), radius_m: r.unwrap_or(0.0) },
        };
        if !self.in_scope(&scope, obs.pose.pos()) {
            return self.reject(
                Some(kind),
                format!("{name}: the vehicle is not in its scope ({})", scope.describe()),
            );
        }
        let (route, span, covers) = match spec.route.kind {
            RouteKind::ScoutLoop => {
                let f = field.unwrap_or_default();
                match self.scout_route(&f, obs) {
                    Ok((route, span)) => (route, span, f),
                    Err(cause) => return self.reject(Some(kind), format!("{name}: {cause}")),
                }
            }
        };
        let cap_mps = req.speed_cap_mps.unwrap_or(spec.route.default_speed_mps);
        let reply =
            self.start_motion(kind, route, 0.0, Some(cap_mps), name.clone(), Some(covers), Some(span));
        if let Some(Running { active: Active::Motion(m), .. }) = &mut self.running {
            m.learned = Some(Box::new(LearnedRun { skill, cap_mps, scope, started_s: obs.t_s }));
        }
        reply
    }

    fn in_scope(&self, scope: &Scope, p: Vec2) -> bool {
        match scope {
            Scope::Field { id, margin_m } => self.map.fields.get(id).is_some_and(|f| {
                point_in_polygon(p, &f.polygon) || polygon_boundary_distance(p, &f.polygon) <= *margin_m
            }),
            Scope::Circle { centre, radius_m } => centre.dist(p) <= *radius_m,
        }
    }

    /// One tick of a learned motion: its end, or the policy's command for the shield.
    pub(super) fn learned_command(
        &mut self,
        m: &mut Motion,
        obs: &Observation,
    ) -> Result<Twist, (ResultCode, String)> {
        let l = m.learned.as_deref().expect("a learned motion");
        let spec = &l.skill.spec;
        if obs.t_s - l.started_s >= spec.max_s {
            return Err((
                ResultCode::Timeout,
                format!("{} ran for its max_s of {} s", spec.name, spec.max_s),
            ));
        }
        if !self.in_scope(&l.scope, obs.pose.pos()) {
            return Err((
                ResultCode::RegionExit,
                format!("{} left its scope ({})", spec.name, l.scope.describe()),
            ));
        }
        let done = m.follower.progress();
        if done >= spec.success.route_fraction {
            let cause = format!("{} completed: {:.0} % of its route driven", spec.name, done * 100.0);
            return Err((ResultCode::Succeeded, cause));
        }
        let input = ObsInput {
            route: &m.follower,
            pose: obs.pose,
            speed_mps: obs.speed_mps,
            cap_mps: l.cap_mps,
            ahead_m: self.ahead_m,
        };
        let x = observe(&spec.observation, &input);
        let t0 = Instant::now();
        let ran = l.skill.policy.run(&x);
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let [speed, yaw] = ran.map_err(|e| (ResultCode::ReactiveFault, format!("{}: {e}", spec.name)))?;
        if ms > spec.tick_budget_ms {
            let cause = format!(
                "{}: the policy took {ms:.3} ms, over its budget of {} ms a tick",
                spec.name, spec.tick_budget_ms
            );
            return Err((ResultCode::ReactiveFault, cause));
        }
        if !(speed.is_finite() && yaw.is_finite()) {
            return Err((
                ResultCode::ReactiveFault,
                format!("{}: the policy gave a non-finite command ({speed}, {yaw})", spec.name),
            ));
        }
        let cmd = Twist { speed_mps: f64::from(speed), yaw_rate_rps: f64::from(yaw) };
        let in_field = self.map.field_at(obs.pose.pos()).is_some();
        let limit_mps = if in_field { self.opts.limits.field_mps } else { self.opts.limits.lane_mps };
        within_limits(cmd, obs.speed_mps, limit_mps, self.opts.follower.max_curvature).map_err(|why| {
            (ResultCode::Failed, format!("{}: the shield refused the command: {why}", spec.name))
        })?;
        Ok(cmd)
    }
}

impl Scope {
    fn describe(&self) -> String {
        match self {
            Scope::Field { id, margin_m } => format!("field {id} and {margin_m} m around it"),
            Scope::Circle { centre, radius_m } => {
                format!("{radius_m} m around ({:.1}, {:.1})", centre.x, centre.y)
            }
        }
    }
}

/// The request's arguments against the skill's schema: the required ones given, the numbers
/// within their bounds (the harness checked the whole schema already; this is the vehicle's
/// own check, for requests over the link).
fn check_arguments(schema: &Value, req: &SkillRequest) -> Result<(), String> {
    let given = |k: &str| match k {
        "field" => req.field.as_ref().map(|s| Value::from(s.as_str())),
        "place" => req.place.as_ref().map(|s| Value::from(s.as_str())),
        "seconds" => req.seconds.map(Value::from),
        "speed_cap_mps" => req.speed_cap_mps.map(Value::from),
        _ => None,
    };
    let props = schema.get("properties").and_then(Value::as_object);
    for k in crate::learned::spec::ARGUMENT_WORDS {
        let p = props.and_then(|p| p.get(k));
        match (given(k), p) {
            (Some(_), None) => return Err(format!("takes no argument \"{k}\"")),
            (Some(v), Some(p)) => {
                let n = v.as_f64();
                if let (Some(n), Some(min)) = (n, p.get("minimum").and_then(Value::as_f64)) {
                    if n < min {
                        return Err(format!("{k}: {n} is below the minimum {min}"));
                    }
                }
                if let (Some(n), Some(max)) = (n, p.get("maximum").and_then(Value::as_f64)) {
                    if n > max {
                        return Err(format!("{k}: {n} is above the maximum {max}"));
                    }
                }
            }
            (None, _) => {}
        }
    }
    let required = schema.get("required").and_then(Value::as_array);
    for r in required.into_iter().flatten().filter_map(Value::as_str) {
        if given(r).is_none() {
            return Err(format!("missing required argument \"{r}\""));
        }
    }
    Ok(())
}
