//! Local planners: what turns a motion's route into a drive command each control step.
//!
//! The skill server owns every motion (`goto`, `scout`, `return_home`, a `resume` of one): it
//! plans the route, checks it against the corridor, tracks the progress along it, decides when
//! the motion ends, and puts every command through the shield. The local planner only steers:
//!
//! 1. [`LocalPlanner::start`] when a motion starts or resumes: the route, where along it the
//!    vehicle is, the speed limits and cap;
//! 2. [`LocalPlanner::command`] each control step with the observation: the command (speed m/s,
//!    yaw rate rad/s), or a [`PlannerFault`];
//! 3. [`LocalPlanner::end`] when the motion ends (any result code).
//!
//! A fault ends the motion with `reactive_fault` and the fault as its cause; the vehicle gets a
//! zero command. The server then drops that planner and asks its [`LocalPlannerFactory`] for a
//! new one at the next motion (a crashed plugin process is started again).
//!
//! In-tree planners ([`Builtin`]): `default`, the built-in driver ([`crate::follower`]), and
//! `pure_pursuit` ([`pure_pursuit`]). A planner outside the vehicle library (the process plugin
//! of the line protocol, `docs/local-planner-protocol.md`) implements the same trait in its own
//! crate and is injected with [`crate::SkillServer::set_local_planner`].

use std::fmt::Debug;
use std::sync::Arc;

use acres_farm::geom::{Polyline, Pose};
use acres_farm::{Map, SpeedLimits};

use crate::follower::{Follower, FollowerParams, Twist};
use crate::{ResultCode, SkillKind};

pub mod pure_pursuit;

/// A motion starts (or resumes): what the local planner steers along.
#[derive(Debug, Clone, Copy)]
pub struct PlanStart<'a> {
    /// The skill's identifier (a resume has its own).
    pub id: u64,
    /// The skill (`goto`, `scout`, `return_home`).
    pub skill: SkillKind,
    /// The motion's target (a place or a field).
    pub target: &'a str,
    /// The route, map frame, m.
    pub route: &'a Polyline,
    /// Where along the route the vehicle is, m (0 at a start; further at a resume).
    pub s_m: f64,
    /// The speed limits of the ground (lane, field), m/s.
    pub limits: SpeedLimits,
    /// The request's speed cap, m/s.
    pub cap_mps: Option<f64>,
    /// The motion ends when the route's end is this near (and the vehicle stands), m.
    pub goal_tolerance_m: f64,
}

/// One control step of a running motion: the observation and the progress the server tracks.
#[derive(Debug, Clone, Copy)]
pub struct PlanStep<'a> {
    /// The skill's identifier.
    pub id: u64,
    /// Mission time, s.
    pub t_s: f64,
    /// The vehicle's pose.
    pub pose: Pose,
    /// The vehicle's speed, m/s.
    pub speed_mps: f64,
    /// The route and the progress along it (`track.s_m`), as the server tracks them.
    pub track: &'a Follower,
    /// The map.
    pub map: &'a Map,
    /// The speed limits of the ground, m/s.
    pub limits: SpeedLimits,
    /// The request's speed cap, m/s.
    pub cap_mps: Option<f64>,
    /// The obstacle distance ahead from the latest scan, m (`None`: nothing seen).
    pub ahead_m: Option<f64>,
}

impl PlanStep<'_> {
    /// The speed limit at the vehicle's position: the ground's (field or lane), under the cap.
    pub fn limit_mps(&self) -> f64 {
        let ground = if self.map.field_at(self.pose.pos()).is_some() {
            self.limits.field_mps
        } else {
            self.limits.lane_mps
        };
        self.cap_mps.map_or(ground, |c| ground.min(c))
    }
}

/// Why a local planner gave no command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The planner is gone (a plugin process exited or closed its output).
    Died,
    /// No command within the per-step time budget.
    Timeout,
    /// The answer was not a command (a malformed line, a wrong type, a non-finite number).
    Malformed,
    /// The planner said it cannot plan (its own error).
    Refused,
}

impl FaultKind {
    /// The word, as in a skill's cause.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Died => "died",
            FaultKind::Timeout => "timeout",
            FaultKind::Malformed => "malformed",
            FaultKind::Refused => "refused",
        }
    }
}

/// A local planner's failure: the motion ends `reactive_fault` with this as its cause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} ({}): {message}", .kind.as_str(), .planner)]
pub struct PlannerFault {
    /// What went wrong.
    pub kind: FaultKind,
    /// The planner's name (`pure_pursuit`, `process:...`).
    pub planner: String,
    /// The details (an exit status, the offending line, the budget).
    pub message: String,
}

/// A local planner: steers a motion along its route (see the module docs).
pub trait LocalPlanner: Send + Debug {
    /// A motion starts or resumes.
    fn start(&mut self, start: &PlanStart<'_>);
    /// The command of this control step (before the shield, which passes or holds it).
    fn command(&mut self, step: &PlanStep<'_>) -> Result<Twist, PlannerFault>;
    /// The motion `id` ended with `code`.
    fn end(&mut self, _id: u64, _code: ResultCode) {}
}

/// Makes the local planner of a skill server (again after a fault).
pub trait LocalPlannerFactory: Send + Sync + Debug {
    /// The planner's name as the scenario's `local_planner` gives it.
    fn name(&self) -> &str;
    /// A new planner for a server on `map` with these follower parameters (the vehicle's
    /// geometry: `max_curvature`, `goal_tolerance_m`).
    fn make(&self, map: &Arc<Map>, params: &FollowerParams) -> Box<dyn LocalPlanner>;
}

/// The in-tree local planners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// `default`: the built-in driver ([`crate::follower::Follower::command`]).
    Default,
    /// `pure_pursuit`: [`pure_pursuit::PurePursuit`].
    PurePursuit,
}

impl Builtin {
    /// Every in-tree planner.
    pub const ALL: [Builtin; 2] = [Builtin::Default, Builtin::PurePursuit];

    /// The name (`default`, `pure_pursuit`).
    pub fn as_str(self) -> &'static str {
        match self {
            Builtin::Default => "default",
            Builtin::PurePursuit => "pure_pursuit",
        }
    }

    /// The planner of a name.
    pub fn parse(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.as_str() == name)
    }

    /// Its factory, shared.
    pub fn factory(self) -> Arc<dyn LocalPlannerFactory> {
        Arc::new(self)
    }
}

impl LocalPlannerFactory for Builtin {
    fn name(&self) -> &str {
        self.as_str()
    }
    fn make(&self, _map: &Arc<Map>, params: &FollowerParams) -> Box<dyn LocalPlanner> {
        match self {
            Builtin::Default => Box::new(DefaultPlanner),
            Builtin::PurePursuit => {
                Box::new(pure_pursuit::PurePursuit::new(pure_pursuit::PurePursuitParams::for_vehicle(params)))
            }
        }
    }
}

/// The built-in driver as a local planner: the server's own tracking follower commands.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultPlanner;

impl LocalPlanner for DefaultPlanner {
    fn start(&mut self, _start: &PlanStart<'_>) {}
    fn command(&mut self, step: &PlanStep<'_>) -> Result<Twist, PlannerFault> {
        Ok(step.track.command(step.map, &step.pose, step.speed_mps, step.limits, step.cap_mps))
    }
}
