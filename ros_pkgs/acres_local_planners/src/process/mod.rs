//! The process plugin: a local planner in another process, in any language, speaking the line
//! protocol of [`wire`] (`docs/local-planner-protocol.md`).
//!
//! The process starts at the first control step of the first motion (`hello` both ways within
//! [`ProcessConfig::hello_budget`]), then answers each step within
//! [`ProcessConfig::step_budget`]. Each way it can fail is a [`PlannerFault`], so the skill
//! server ends the motion `reactive_fault` with it as the cause and stops the vehicle:
//!
//! | the plugin | fault | cause (after `local planner`) |
//! | --- | --- | --- |
//! | cannot be started, exits, closes its output | `died` | `died (process:...): the process exited (exit status: 3) at step 17` |
//! | answers later than the budget | `timeout` | `timeout (process:...): no answer to step 17 within 200 ms` |
//! | writes a line that is not a command | `malformed` | `malformed (process:...): step 17: expected ... in "..."` |
//! | answers `error` | `refused` | `refused (process:...): step 17: <its message>` |
//!
//! After a fault the server drops the planner (the process is killed) and the next motion
//! starts a new one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use acres_farm::Map;
use acres_scenario::local_planner::ProcessCommand;
use acres_vehicle::follower::{FollowerParams, Twist};
use acres_vehicle::local_planner::{
    FaultKind, LocalPlanner, LocalPlannerFactory, PlanStart, PlanStep, PlannerFault,
};
use acres_vehicle::ResultCode;

pub mod child;
pub mod wire;

use child::{Line, PluginChild, Wait};
use wire::{FromPlugin, LimitsMsg, PoseMsg, RouteMsg, ToPlugin, PROTOCOL};

/// The time budgets of a plugin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcessConfig {
    /// From the start of the process to its `hello` (an interpreter's start-up included).
    pub hello_budget: Duration,
    /// From writing a `step` to reading its answer.
    pub step_budget: Duration,
    /// After `exit`, the time the process has to end before it is killed.
    pub exit_grace: Duration,
}

impl Default for ProcessConfig {
    fn default() -> Self {
        Self {
            hello_budget: Duration::from_secs(10),
            step_budget: Duration::from_millis(200),
            exit_grace: Duration::from_millis(500),
        }
    }
}

/// Makes [`ProcessPlanner`]s of one command.
#[derive(Debug, Clone)]
pub struct ProcessFactory {
    cmd: ProcessCommand,
    config: ProcessConfig,
}

impl ProcessFactory {
    /// A factory of plugins running `cmd`.
    pub fn new(cmd: ProcessCommand, config: ProcessConfig) -> Self {
        Self { cmd, config }
    }
}

impl LocalPlannerFactory for ProcessFactory {
    fn name(&self) -> &str {
        &self.cmd.spec
    }
    fn make(&self, _map: &Arc<Map>, params: &FollowerParams) -> Box<dyn LocalPlanner> {
        Box::new(ProcessPlanner::new(self.cmd.clone(), self.config, params.max_curvature))
    }
}

/// A local planner in another process.
#[derive(Debug)]
pub struct ProcessPlanner {
    cmd: ProcessCommand,
    config: ProcessConfig,
    max_curvature: f64,
    child: Option<PluginChild>,
    seq: u64,
    route: Option<RouteMsg>,
}

impl ProcessPlanner {
    /// A planner that starts `cmd` at its first step.
    pub fn new(cmd: ProcessCommand, config: ProcessConfig, max_curvature: f64) -> Self {
        Self { cmd, config, max_curvature, child: None, seq: 0, route: None }
    }

    fn fault(&self, kind: FaultKind, message: String) -> PlannerFault {
        PlannerFault { kind, planner: self.cmd.spec.clone(), message }
    }

    /// The fault of a process that stopped answering: its exit status when it has one.
    fn died(&mut self, at: &str) -> PlannerFault {
        let status = self.child.as_mut().and_then(|c| c.exit_status(Duration::from_millis(200)));
        let how = match status {
            Some(s) => format!("the process exited ({s})"),
            None => "the process closed its output".to_string(),
        };
        self.fault(FaultKind::Died, format!("{how} {at}"))
    }

    /// Starts the process and exchanges `hello`; a process that fails it is killed.
    fn ensure_started(&mut self) -> Result<(), PlannerFault> {
        if self.child.is_some() {
            return Ok(());
        }
        let r = self.hello();
        if r.is_err() {
            self.child = None;
        }
        r
    }

    fn hello(&mut self) -> Result<(), PlannerFault> {
        let mut child = PluginChild::spawn(&self.cmd).map_err(|e| {
            self.fault(FaultKind::Died, format!("could not start {}: {e}", self.cmd.program.display()))
        })?;
        let hello = ToPlugin::Hello {
            protocol: PROTOCOL.into(),
            budget_ms: self.config.step_budget.as_millis() as u64,
            max_curvature: self.max_curvature,
        };
        let sent = child.send(&wire::encode(&hello));
        self.child = Some(child);
        if sent.is_err() {
            return Err(self.died("before its hello"));
        }
        let deadline = Instant::now() + self.config.hello_budget;
        match self.child.as_mut().expect("just set").recv(deadline) {
            Ok(Line::Text(t)) => {
                match wire::decode(&t) {
                    Ok(FromPlugin::Hello { protocol, .. }) if protocol == PROTOCOL => Ok(()),
                    Ok(FromPlugin::Hello { protocol, .. }) => Err(self.fault(
                        FaultKind::Malformed,
                        format!("the plugin speaks protocol \"{protocol}\", the harness \"{PROTOCOL}\""),
                    )),
                    Ok(_) => Err(self
                        .fault(FaultKind::Malformed, format!("expected hello, got {}", wire::excerpt(&t)))),
                    Err(e) => Err(self.fault(FaultKind::Malformed, format!("hello: {e}"))),
                }
            }
            Ok(other) => Err(self.fault(FaultKind::Malformed, format!("hello: {}", line_problem(&other)))),
            Err(Wait::Closed) => Err(self.died("before its hello")),
            Err(Wait::Timeout) => Err(self.fault(
                FaultKind::Timeout,
                format!("no hello within {} ms", self.config.hello_budget.as_millis()),
            )),
        }
    }

    /// The answer to step `seq`.
    fn answer(&mut self, seq: u64, deadline: Instant) -> Result<Twist, PlannerFault> {
        let got = self.child.as_mut().expect("started").recv(deadline);
        let t = match got {
            Ok(Line::Text(t)) => t,
            Ok(other) => {
                return Err(self.fault(FaultKind::Malformed, format!("step {seq}: {}", line_problem(&other))))
            }
            Err(Wait::Closed) => return Err(self.died(&format!("at step {seq}"))),
            Err(Wait::Timeout) => {
                let ms = self.config.step_budget.as_millis();
                return Err(self.fault(FaultKind::Timeout, format!("no answer to step {seq} within {ms} ms")));
            }
        };
        match wire::decode(&t) {
            Ok(FromPlugin::Command { seq: s, speed_mps, yaw_rate_rps }) if s == seq => {
                if speed_mps.is_finite() && yaw_rate_rps.is_finite() {
                    Ok(Twist { speed_mps, yaw_rate_rps })
                } else {
                    Err(self.fault(FaultKind::Malformed, format!("step {seq}: a command that is not finite")))
                }
            }
            Ok(FromPlugin::Error { seq: s, message }) if s == seq => {
                Err(self.fault(FaultKind::Refused, format!("step {seq}: {message}")))
            }
            Ok(FromPlugin::Command { seq: s, .. } | FromPlugin::Error { seq: s, .. }) => {
                Err(self.fault(FaultKind::Malformed, format!("step {seq}: the answer is for step {s}")))
            }
            Ok(FromPlugin::Hello { .. }) => {
                Err(self.fault(FaultKind::Malformed, format!("step {seq}: a hello instead of a command")))
            }
            Err(e) => Err(self.fault(FaultKind::Malformed, format!("step {seq}: {e}"))),
        }
    }
}

fn line_problem(l: &Line) -> String {
    match l {
        Line::Text(t) => wire::excerpt(t),
        Line::Oversized => format!("a line longer than {} bytes", wire::MAX_LINE_BYTES),
        Line::NotUtf8 => "a line that is not UTF-8".into(),
        Line::Closed => "the output closed".into(),
    }
}

impl LocalPlanner for ProcessPlanner {
    fn start(&mut self, s: &PlanStart<'_>) {
        self.route = Some(RouteMsg {
            skill: s.skill.as_str().into(),
            target: s.target.into(),
            points: s.route.points.iter().map(|p| [p.x, p.y]).collect(),
            s_m: s.s_m,
            limits: LimitsMsg { lane_mps: s.limits.lane_mps, field_mps: s.limits.field_mps },
            cap_mps: s.cap_mps,
            goal_tolerance_m: s.goal_tolerance_m,
        });
    }

    fn command(&mut self, step: &PlanStep<'_>) -> Result<Twist, PlannerFault> {
        self.ensure_started()?;
        self.seq += 1;
        let seq = self.seq;
        let msg = ToPlugin::Step {
            seq,
            id: step.id,
            t_s: step.t_s,
            pose: PoseMsg { x: step.pose.x, y: step.pose.y, yaw: step.pose.yaw },
            speed_mps: step.speed_mps,
            s_m: step.track.s_m,
            remaining_m: step.track.remaining_m(),
            limit_mps: step.limit_mps(),
            ahead_m: step.ahead_m,
            route: self.route.take(),
        };
        let line = wire::encode(&msg);
        let deadline = Instant::now() + self.config.step_budget;
        if self.child.as_mut().expect("started").send(&line).is_err() {
            return Err(self.died(&format!("at step {seq}")));
        }
        self.answer(seq, deadline)
    }

    fn end(&mut self, id: u64, code: ResultCode) {
        if let Some(c) = self.child.as_mut() {
            // No answer comes; a process that is gone shows at the next step.
            let _ = c.send(&wire::encode(&ToPlugin::End { id, code: code.as_str().into() }));
        }
    }
}

impl Drop for ProcessPlanner {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.close(&wire::encode(&ToPlugin::Exit {}), self.config.exit_grace);
        }
    }
}
