//! The planner loop: events, not steps. The world runs in control steps; the planner is woken
//! when something happens, and each wake-up is a tool loop that ends with a short text. The time
//! of each model call is charged on the mission clock while the running skill goes on, and events
//! that happen meanwhile wake the planner next. The run ends when the planner ends a turn while no
//! skill runs, no timer is set and no scenario event waits, or at a limit.
//!
//! - [`state`]: what the loop and the tools share.
//! - [`wake`]: wake-up reasons and messages.
//! - [`classical`]: the classical rule set (mode `classical`).
//! - [`outcome`]: the success checks and the score.

pub mod classical;
pub mod outcome;

mod step;
mod turn;

pub use self::turn::{reminder_for, REMINDER, REMINDER_CUT, REMINDER_NO_CALL};

use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use serde_json::{json, Value};

use crate::planners::planning::costs::CostTable;
use acres_farm::geom::Vec2;

use crate::planners::Client;
use crate::runfolder::kinds::Record;
use crate::runfolder::rows::{EndCode, Identity, Mode, Profile, Row, RunRow, ToolDef, World};
use crate::runfolder::writer::{RunWriter, PARTIAL_SUFFIX};
use crate::scenario::{Limits, Recovery, RecoveryMode, Scenario, When};
use crate::world::knowledge::Cell;
use crate::world::{CoreWorld, WorldPort};

use crate::clock::wall_now;
use crate::planners::wake::{StartWake, Wake, WakeDetail};
use crate::tools::state::RunState;

/// The harness version written in run rows.
pub use crate::HARNESS_VERSION;

/// How a run is made.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The mode.
    pub mode: Mode,
    /// The input profile.
    pub profile: Profile,
    /// At most this many mission seconds per wall second (0: no limit).
    pub pace: f64,
    /// `ask_operator` is on.
    pub operator: bool,
    /// The folder of the run folders.
    pub out: PathBuf,
    /// The world's seed.
    pub seed: u64,
    /// `--recovery-mode`, overriding the scenario's.
    pub recovery_mode: Option<RecoveryMode>,
    /// `--recovery-option KEY=VALUE` pairs, overriding the scenario's.
    pub recovery_options: Vec<(String, String)>,
    /// The model configuration's name (folder names, run row).
    pub model: String,
    /// The model file, if any.
    pub model_file: Option<String>,
    /// The model file's `call_timeout_s` (the scenario's `limits.call_s` wins).
    pub call_s: Option<f64>,
    /// The model file's `wake_timeout_s` (the scenario's `limits.wake_s` wins).
    pub wake_s: Option<f64>,
    /// The model file's `calls_per_run`: then the run ends `limit_model_calls`.
    pub calls_per_run: Option<u64>,
    /// Environment variables whose values are secrets whatever their names (the model file's
    /// `api_key_env`).
    pub secret_vars: Vec<String>,
    /// What the run records: both files (`all`, the default), `episode.interface.mcap` only
    /// (`interface`) or nothing (`none`; the recording benchmark and the digest test compare).
    pub record: Record,
    /// The link world's options (`--world link`); `None`: the core in the process.
    pub link: Option<crate::world::link::LinkOptions>,
    /// The planner as the run row records it (`None`: not recorded).
    pub planner: Option<crate::runfolder::rows::PlannerInfo>,
    /// The conformance probe's verdicts (`run --probe`), for the run row's `serving.probe`.
    pub probe: Option<std::collections::BTreeMap<String, crate::planners::models::conform::Verdict>>,
}

impl RunOptions {
    /// Options with the defaults of `run`: checked mode, vehicle profile, no pace, the scripted
    /// model, seed 1, out `out`.
    pub fn new(out: impl Into<PathBuf>) -> Self {
        RunOptions {
            mode: Mode::Checked,
            profile: Profile::Vehicle,
            pace: 0.0,
            operator: false,
            out: out.into(),
            seed: 1,
            recovery_mode: None,
            recovery_options: Vec::new(),
            model: "scripted".into(),
            model_file: None,
            call_s: None,
            wake_s: None,
            calls_per_run: None,
            secret_vars: Vec::new(),
            record: Record::All,
            link: None,
            planner: None,
            probe: None,
        }
    }
}

/// The limits of a run: the scenario's, with the model file's call limits where the scenario
/// gives none.
pub fn effective_limits(sc: &Scenario, opts: &RunOptions) -> Limits {
    let mut l = sc.limits.clone();
    if !sc.limits_given.contains("call_s") {
        if let Some(v) = opts.call_s {
            l.call_s = v;
        }
    }
    if !sc.limits_given.contains("wake_s") {
        if let Some(v) = opts.wake_s {
            l.wake_s = v;
        }
    }
    l
}

/// What a run gave.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The run folder.
    pub folder: PathBuf,
    /// The end code.
    pub end: EndCode,
    /// All success checks held.
    pub success: bool,
    /// The world digest.
    pub digest: String,
    /// Mission time at the end, s.
    pub t_s: f64,
}

/// The planner of a run.
pub enum Planner<'c> {
    /// The classical rule set: no model, no tools.
    Classical,
    /// A model configuration (scripted, a language model, a replay).
    Model(&'c dyn Client),
}

/// The effective recovery of a run: the scenario's, with the command line's overrides.
pub fn effective_recovery(sc: &Scenario, opts: &RunOptions) -> anyhow::Result<Recovery> {
    let mut r = sc.recovery.clone();
    if let Some(m) = opts.recovery_mode {
        r.mode = m;
    }
    for (k, v) in &opts.recovery_options {
        match k.as_str() {
            "hold_s" => {
                r.hold_s = v.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0).with_context(|| {
                    format!("--recovery-option hold_s={v}: expected a positive number of seconds")
                })?
            }
            other => anyhow::bail!("--recovery-option {other}={v}: unknown option; the options are hold_s"),
        }
    }
    Ok(r)
}

/// The system text of a run.
pub fn system_text(sc: &Scenario, mode: Mode, profile: Profile) -> String {
    let plan_rule = if mode == Mode::Checked {
        " goto and scout of a field need an accepted plan (tool plan) whose next visit is that field."
    } else {
        ""
    };
    format!(
        "You plan the missions of an agricultural vehicle that scouts fields on the farm map '{}'. You never steer: \
         you ask the vehicle's skill server for skills with the tool dispatch, and a trajectory checker and a shield \
         stand between you and the vehicle.{plan_rule} You are woken when something happens (a skill ended, returns \
         on the route, a request, a timer); each wake-up you call tools and then end your turn with a short text. \
         The world does not wait: the time you think is charged on the mission clock while the vehicle goes on. \
         Input profile: {} ({}). Units: metres, seconds, MJ; headings in degrees counter-clockwise from east.",
        sc.map,
        profile.as_str(),
        match profile {
            Profile::Vehicle => "only what the vehicle senses: pose, scan, skill server events, estimates",
            Profile::Simulator => "also the simulator's object list and fuel energy",
        }
    )
}

/// Runs one scenario into `<out>/<scenario>__<mode>__<model>/`.
pub fn run_scenario(
    sc: &Scenario,
    opts: &RunOptions,
    planner: Planner,
    table: CostTable,
) -> anyhow::Result<RunOutcome> {
    let name = crate::runfolder::folder_name(&sc.id, opts.mode.as_str(), &opts.model);
    let secrets = crate::runfolder::Secrets::from_env().with_vars(&opts.secret_vars);
    // Input first, then the world: a run that cannot start writes nothing, so an earlier <name>
    // is untouched and no partial folder is left.
    let recovery = effective_recovery(sc, opts)?;
    let world = open_world(sc, opts)?;
    // The run writes into <name>.partial; a finished <name> stays until this run has ended.
    let writer = RunWriter::create_partial(&opts.out, &name, secrets)
        .map_err(|e| Environment(format!("creating the run folder {name}{PARTIAL_SUFFIX}: {e}")))?;
    let folder = writer.path().to_path_buf();
    let tools = crate::tools::scenario_tools(opts.mode, opts.profile, opts.operator, sc);
    let system = system_text(sc, opts.mode, opts.profile);
    let limits = effective_limits(sc, opts);
    let mut st = RunState::new(sc, opts.mode, opts.profile, world, table, writer, opts.operator);
    let mut row = run_row(sc, opts, &limits, &recovery, &system, &tools);
    if let (Planner::Model(c), Some(p)) = (&planner, row.planner.as_mut()) {
        // What the model is sent besides the conversation: the run's seed, the temperature.
        p.options.extend(c.sampling(opts.seed));
    }
    if let Planner::Model(c) = &planner {
        // The server as it reports itself; its window feeds the session's context management.
        row.serving = c.serving();
    }
    if let Some(verdicts) = &opts.probe {
        let model = row.model.clone();
        let serving = row
            .serving
            .get_or_insert_with(|| crate::planners::models::serving::Serving { model, ..Default::default() });
        serving.probe = Some(verdicts.clone());
    }
    st.log(Row::Run(row));
    if opts.record != Record::None {
        match crate::runfolder::recording::Recorder::create(&folder, &sc.map_data, st.port(), opts.record) {
            Ok(r) => st.recorder = Some(r),
            Err(e) => eprintln!("acres-harness: no episode recording: {e}"),
        }
    }
    let (session, start_error) = match planner {
        Planner::Classical => (None, None),
        Planner::Model(c) => match c.start_seeded(&system, &tools, opts.seed) {
            Ok(s) => (Some(s), None),
            Err(e) => (None, Some(e)),
        },
    };
    let mut lp = Loop::new(st, opts.clone(), limits, recovery, tools, session);
    match start_error {
        // A session that cannot start (settings the command line did not catch) ends the run.
        Some(e) => lp.start_failed(&e),
        None => lp.run(),
    }
    let (end, success, digest, t_s) = lp.finish();
    lp.st.finish_recording();
    lp.st.port_mut().end(end.as_str());
    if let Some(e) = lp.st.writer.write_failure().map(String::from) {
        // An incomplete folder never replaces a finished one: it stays <name>.partial.
        return Err(anyhow::Error::new(Environment(format!(
            "the run folder {} could not be written whole ({e}): it is kept as it is, marked incomplete; \
             an earlier {name} is untouched",
            folder.display()
        ))));
    }
    drop(lp);
    let folder = crate::runfolder::writer::publish(&opts.out, &name).map_err(|e| {
        Environment(format!("{}: cannot give the ended run its name {name}: {e}", folder.display()))
    })?;
    Ok(RunOutcome { folder, end, success, digest, t_s })
}

/// The run's world: the in-process one, or the vehicle through the bridge.
fn open_world(sc: &Scenario, opts: &RunOptions) -> anyhow::Result<Box<dyn WorldPort>> {
    let Some(l) = &opts.link else { return Ok(Box::new(CoreWorld::new(sc, opts.seed))) };
    match crate::world::link::LinkWorld::connect(sc, l) {
        Ok(w) => Ok(Box::new(w)),
        Err(e) => {
            // No bridge to reach is the machine's (exit 3); a bridge that was reached but refused
            // or misbehaved (its version, its proof, a downgrade) fails the run (1).
            let connect = matches!(e, crate::world::link::AttachError::Connect { .. });
            let e = anyhow::Error::new(e);
            Err(if connect {
                e.context(Environment("attaching to the bridge".into()))
            } else {
                e.context("attaching to the bridge")
            })
        }
    }
}

/// A run could not be made for a reason of the machine, not of its input: a folder that cannot
/// be written, a bridge that cannot be reached (the command line's exit code 3).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Environment(pub String);

fn run_row(
    sc: &Scenario,
    opts: &RunOptions,
    limits: &Limits,
    recovery: &Recovery,
    system: &str,
    tools: &[ToolDef],
) -> RunRow {
    let to_map = |v: Value| v.as_object().cloned().unwrap_or_default();
    RunRow {
        t: 0.0,
        wall: wall_now(),
        schema: crate::runfolder::SCHEMA.into(),
        scenario: sc.id.clone(),
        scenario_file: sc.file.display().to_string(),
        scenario_json: to_map(serde_json::to_value(sc).unwrap_or(json!({}))),
        title: sc.title.clone(),
        instruction: sc.instruction.clone(),
        fields: sc.fields.clone(),
        condition: sc.condition.as_str().into(),
        deadline_s: sc.deadline_s,
        fuel_limit_mj: sc.fuel_limit_mj,
        mode: opts.mode,
        profile: opts.profile,
        world: if opts.link.is_some() { World::Link } else { World::Core },
        model: opts.model.clone(),
        model_file: opts.model_file.clone(),
        identity: Identity {
            harness: HARNESS_VERSION.into(),
            commit: option_env!("ACRES_COMMIT").map(String::from),
            seed: opts.seed,
        },
        system: system.into(),
        tools: tools.to_vec(),
        limits: limits.clone(),
        recovery: recovery.clone(),
        pace: opts.pace,
        planner: opts.planner.clone(),
        record: opts.record,
        serving: None,
        rows_version: Some(crate::runfolder::rows::ROWS_VERSION),
    }
}

/// The loop of one run.
pub(crate) struct Loop<'a> {
    pub(crate) st: RunState<'a>,
    pub(crate) opts: RunOptions,
    pub(crate) limits: Limits,
    pub(crate) recovery: Recovery,
    pub(crate) tools: Vec<ToolDef>,
    pub(crate) session: Option<Box<dyn crate::planners::Session>>,
    pub(crate) classical: Option<classical::Classical>,
    pub(crate) end: Option<EndCode>,
    /// What will wake the planner: queued wake-ups, the scenario's requests, timers.
    pub(crate) due: Due,
    /// What was reported already: pose rows, blocked places, objects.
    pub(crate) seen: Seen,
    /// How the mission goes: the clock and stall window, scouted fields, blocks, errors, home.
    pub(crate) progress: Progress,
    /// Safety measured from the world's truth (never a planner input).
    pub(crate) safety: crate::world::safety::SafetyMeter,
    /// The world gave the safety meter its truth (false on a link world).
    pub(crate) safety_measured: bool,
}

/// What will wake the planner (a part of the loop).
#[derive(Debug)]
pub(crate) struct Due {
    /// Wake-ups waiting, in order.
    pub(crate) wakes: VecDeque<Wake>,
    /// The scenario's operator requests: when, text, sent.
    pub(crate) requests: Vec<(When, String, bool)>,
    /// A `model_error` wake-up at this mission time, s.
    pub(crate) model_error_at: Option<f64>,
    /// The next periodic wake-up (`wake_every_s`), s.
    pub(crate) next_periodic_s: Option<f64>,
    /// A `stuck` wake-up was sent for the hold going on.
    pub(crate) stuck_sent: bool,
}

/// What was reported already (a part of the loop).
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// The number of the next pose row (one each 0.5 s of mission time).
    pub(crate) next_pose_n: u64,
    /// Blocked places reported on the route.
    pub(crate) reported_cells: BTreeSet<Cell>,
    /// Objects reported in the sensors' reach (simulator profile).
    pub(crate) seen_objects: BTreeSet<u32>,
}

/// How the mission goes (a part of the loop).
#[derive(Debug)]
pub(crate) struct Progress {
    /// The wall clock at the start.
    pub(crate) wall0: Instant,
    /// `(t, driven m)` over the last `stall_s`.
    pub(crate) stall: VecDeque<(f64, f64)>,
    /// The vehicle's position at the last step.
    pub(crate) last_pos: Vec2,
    /// Scouted fields with their mission times.
    pub(crate) scouted_at: Vec<(String, f64)>,
    /// Skills that ended `blocked`.
    pub(crate) blocked_count: u64,
    /// Model calls without a reply in a row.
    pub(crate) consecutive_errors: u32,
    /// Since when the vehicle stands at home (for `before_deadline`).
    pub(crate) home_since: Option<f64>,
}

impl<'a> Loop<'a> {
    fn new(
        st: RunState<'a>,
        opts: RunOptions,
        limits: Limits,
        recovery: Recovery,
        tools: Vec<ToolDef>,
        session: Option<Box<dyn crate::planners::Session>>,
    ) -> Self {
        let requests = st
            .sc
            .events
            .iter()
            .filter_map(|e| match &e.what {
                crate::scenario::EventKind::Request { text } => Some((e.when, text.clone(), false)),
                _ => None,
            })
            .collect();
        let classical = (opts.mode == Mode::Classical).then(classical::Classical::default);
        let last_pos = st.pose().pos();
        let next_periodic_s = limits.wake_every_s;
        Loop {
            st,
            opts,
            limits,
            recovery,
            tools,
            session,
            classical,
            end: None,
            due: Due {
                wakes: VecDeque::new(),
                requests,
                model_error_at: None,
                next_periodic_s,
                stuck_sent: false,
            },
            seen: Seen::default(),
            progress: Progress {
                wall0: Instant::now(),
                stall: VecDeque::new(),
                last_pos,
                scouted_at: Vec::new(),
                blocked_count: 0,
                consecutive_errors: 0,
                home_since: None,
            },
            safety: crate::world::safety::SafetyMeter::new(),
            safety_measured: false,
        }
    }

    fn run(&mut self) {
        self.log_pose();
        let sc = self.st.sc;
        self.due.wakes.push_front(Wake::new(WakeDetail::Start(StartWake {
            instruction: sc.instruction.clone(),
            fields: sc.fields.clone(),
            deadline_s: sc.deadline_s,
            fuel_limit_mj: sc.fuel_limit_mj,
        })));
        while self.end.is_none() {
            if let Some(w) = self.due.wakes.pop_front() {
                self.wake(w);
                continue;
            }
            self.classical_act();
            if self.idle() {
                self.end = Some(EndCode::Done);
                break;
            }
            self.step();
        }
    }

    /// The session did not start: the run ends `model_error` with its cause.
    fn start_failed(&mut self, e: &crate::planners::ModelError) {
        self.log_pose();
        self.st.log(Row::ModelError(crate::runfolder::rows::ModelErrorRow {
            t: 0.0,
            wall: wall_now(),
            call: 0,
            kind: e.kind,
            error: format!("the session did not start: {}", e.message),
            latency_s: 0.0,
            repairs: e.repairs,
            charged_s: Some(0.0),
        }));
        self.st.counters.model_errors += 1;
        self.end = Some(EndCode::ModelError);
    }

    /// Nothing runs, no timer, no scenario event waits.
    fn idle(&self) -> bool {
        self.st.port().status_ref().skill.is_none()
            && self.st.mission.timer_s.is_none()
            && self.due.model_error_at.is_none()
            && self.st.port().pending_object_events() == 0
            && !self.due.requests.iter().any(|(w, _, fired)| !fired && self.request_can_fire(w))
            && self.classical.as_ref().is_none_or(|c| c.finished())
    }

    fn request_can_fire(&self, w: &When) -> bool {
        match w {
            When::At { .. } => true,
            When::AfterSeen { id, .. } => {
                self.st.port().truth().is_some_and(|t| t.first_seen.contains_key(id))
            }
        }
    }
}
