//! The run as the viewer and the video see it, built from the rows of `run.jsonl` decoded with
//! the harness's own [`Row`] (never by looking keys up in strings).
//!
//! [`RunLog::read`] reads a run folder; a run in progress (no `end` row) may end with a line cut
//! in the middle, which is left out. [`Timeline::of`] groups the rows into what the parts of the
//! page show: the skills with their result codes, each model call from its request time to its
//! reply (request time plus latency: "the model thinks" in between), the tool calls and their
//! results, the plan verdicts, the events and the wake-ups.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use acres_vehicle::skills::SkillKind;

use crate::runfolder::rows::{EndRow, PlanSource, Row, RunRow, ToolCall, WakeReason};
use crate::runfolder::RUN_FILE;

/// A run folder that cannot be shown.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The folder has no readable `run.jsonl`.
    #[error("{file}: cannot read: {message}")]
    Read {
        /// The file.
        file: PathBuf,
        /// What the system said.
        message: String,
    },
    /// A row does not decode.
    #[error("{file}:{line}: {message}")]
    Row {
        /// The file.
        file: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What serde said.
        message: String,
    },
    /// The first row is not a `run` row.
    #[error("{file}: the first row is not a run row")]
    NoRunRow {
        /// The file.
        file: PathBuf,
    },
    /// The scenario of the run row or its map cannot be loaded.
    #[error("the scenario of the run cannot be loaded: {message}")]
    Scenario {
        /// What the loader said.
        message: String,
    },
}

/// The decoded rows of one run folder.
#[derive(Debug, Clone)]
pub struct RunLog {
    /// The run folder.
    pub folder: PathBuf,
    /// The first row.
    pub run: RunRow,
    /// Every row after the run row, in file order.
    pub rows: Vec<Row>,
    /// The end row, when the run is finished.
    pub end: Option<EndRow>,
}

impl RunLog {
    /// Reads `folder/run.jsonl`. A last line that does not decode is left out while the run has
    /// no end row (a run in progress writes whole lines, but the reader may meet one half
    /// written); any other bad line is an error.
    pub fn read(folder: &Path) -> Result<RunLog, ViewError> {
        let file = folder.join(RUN_FILE);
        let text = std::fs::read_to_string(&file)
            .map_err(|e| ViewError::Read { file: file.clone(), message: e.to_string() })?;
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut rows = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            match Row::decode(line) {
                Ok(r) => rows.push(r),
                Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => break,
                Err(e) => return Err(ViewError::Row { file, line: i + 1, message: e.to_string() }),
            }
        }
        let mut it = rows.into_iter();
        let Some(Row::Run(run)) = it.next() else { return Err(ViewError::NoRunRow { file }) };
        let rows: Vec<Row> = it.collect();
        let end = rows.iter().rev().find_map(|r| if let Row::End(e) = r { Some(e.clone()) } else { None });
        Ok(RunLog { folder: folder.to_path_buf(), run, rows, end })
    }

    /// The mission time of the last row, s.
    pub fn t_last_s(&self) -> f64 {
        self.rows.last().map_or(0.0, Row::t)
    }

    /// The scenario of the run row, loaded against the maps folder `maps` (its map included).
    pub fn scenario(&self, maps: &Path) -> Result<crate::scenario::Scenario, ViewError> {
        let text = serde_json::to_string(&self.run.scenario_json)
            .map_err(|e| ViewError::Scenario { message: e.to_string() })?;
        crate::scenario::parse(&text, Path::new(&self.run.scenario_file), maps)
            .map_err(|e| ViewError::Scenario { message: e.to_string() })
    }
}

/// The events of the skill server that the viewer reads, parsed once from an event row's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventName {
    /// A skill started.
    SkillStarted,
    /// A skill ended with a result code.
    SkillEnded,
    /// A skill was refused.
    SkillRejected,
    /// The shield holds the vehicle (`detail`: the obstacle's `x`, `y`).
    ShieldHold,
    /// The shield releases it.
    ShieldRelease,
    /// A field was scouted (`detail`: `field`).
    FieldScouted,
    /// Any other name.
    #[serde(other)]
    Other,
}

impl EventName {
    /// The name of an event row, parsed.
    pub fn of(name: &str) -> EventName {
        serde_json::from_value(Value::String(name.to_string())).unwrap_or(EventName::Other)
    }
}

/// A skill from its start to its end.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillSpan {
    /// The skill's name as the row gives it (`goto`, `scout`, `wait`, ...).
    pub skill: String,
    /// The skill, when it is one of the skill server's own.
    pub kind: Option<SkillKind>,
    /// The target (a field or `H`), when the skill has one.
    pub target: Option<String>,
    /// The start, s.
    pub t0_s: f64,
    /// The end, s; `None` while it runs.
    pub t1_s: Option<f64>,
    /// The result code, once ended.
    pub code: Option<String>,
    /// The cause of the end.
    pub cause: Option<String>,
}

/// One model call: the request, and the reply at the request time plus the latency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    /// The call number, from 1.
    pub call: u64,
    /// The wake-up of the call.
    pub wake: u64,
    /// The request time, s.
    pub t0_s: f64,
    /// The reply time (request plus latency), s; `None` while the model thinks.
    pub t1_s: Option<f64>,
    /// The frames sent.
    pub frames: Vec<String>,
    /// The reply's text (or the error's).
    pub text: String,
    /// The reasoning text, when logged.
    pub reasoning: Option<String>,
    /// The tool calls of the reply.
    pub tool_calls: Vec<ToolCall>,
    /// Whether the call gave no reply.
    pub error: bool,
}

/// A wake-up.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Wake {
    /// The number, from 1.
    pub n: u64,
    /// The time, s.
    pub t_s: f64,
    /// Why.
    pub reason: WakeReason,
    /// The message the planner got.
    pub message: String,
    /// The picture's file relative to the run folder (`frames/f0001.png`), if any.
    pub frame_file: Option<String>,
}

/// A tool call and its result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolUse {
    /// The time, s.
    pub t_s: f64,
    /// The wake-up.
    pub wake: u64,
    /// The tool.
    pub name: String,
    /// The arguments.
    pub arguments: Value,
    /// The result.
    pub result: Map<String, Value>,
    /// Whether the result is an error.
    pub error: bool,
}

/// A plan verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Its index among the run's verdicts, from 0 (the picture `/api/verdict.png?i=`).
    pub i: usize,
    /// The time, s.
    pub t_s: f64,
    /// The visits.
    pub visits: Vec<String>,
    /// Whether the plan returns home.
    pub return_home: bool,
    /// Accepted or refused.
    pub accepted: bool,
    /// Who judged.
    pub source: PlanSource,
    /// The reason code of a refusal.
    pub reason: Option<String>,
    /// The counterexample of a refusal.
    pub counterexample: Option<String>,
    /// The planned time, s.
    pub planned_time_s: Option<f64>,
    /// The planned energy, MJ.
    pub planned_energy_mj: Option<f64>,
}

/// An event of the skill server, a request, a note or a link record: a mark on the timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mark {
    /// The time, s.
    pub t_s: f64,
    /// The event name (`skill_ended`, `shield_hold`, ...), or `request`, `note`, `link_lost`.
    pub name: String,
    /// A short text: skill, code, cause or the text of a request or note.
    pub text: String,
}

/// Everything the page and the video show besides the world.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    /// The last mission time, s.
    pub t_end_s: f64,
    /// Whether the run has its end row.
    pub finished: bool,
    /// The skills.
    pub skills: Vec<SkillSpan>,
    /// The model calls.
    pub calls: Vec<Call>,
    /// The wake-ups.
    pub wakes: Vec<Wake>,
    /// The tool calls.
    pub tools: Vec<ToolUse>,
    /// The plan verdicts.
    pub verdicts: Vec<Verdict>,
    /// The events and other marks.
    pub marks: Vec<Mark>,
}

/// The details of an event that starts a skill, as written by the skill server.
#[derive(Debug, Deserialize)]
struct StartDetail {
    /// The target field or `H`.
    target: Option<String>,
}

fn join(parts: &[Option<&str>]) -> String {
    parts.iter().flatten().copied().collect::<Vec<_>>().join(" ")
}

impl Timeline {
    /// Groups the rows of a run.
    pub fn of(log: &RunLog) -> Timeline {
        let mut tl = Timeline { t_end_s: log.t_last_s(), finished: log.end.is_some(), ..Timeline::default() };
        let frame_files: std::collections::BTreeMap<String, String> = log
            .rows
            .iter()
            .filter_map(|r| if let Row::Frame(f) = r { Some((f.id.clone(), f.file.clone())) } else { None })
            .collect();
        for row in &log.rows {
            match row {
                Row::Event(e) => tl.on_event(e),
                Row::Wake(w) => tl.wakes.push(Wake {
                    n: w.n,
                    t_s: w.t,
                    reason: w.reason,
                    message: w.message.clone(),
                    frame_file: w.frame.as_ref().and_then(|f| frame_files.get(f).cloned()),
                }),
                Row::ModelSend(s) => tl.calls.push(Call {
                    call: s.call,
                    wake: s.wake,
                    t0_s: s.t,
                    t1_s: None,
                    frames: s.blocks.iter().filter_map(|b| b.frame.clone()).collect(),
                    text: String::new(),
                    reasoning: None,
                    tool_calls: Vec::new(),
                    error: false,
                }),
                Row::ModelReply(r) => {
                    if let Some(c) = tl.calls.iter_mut().rev().find(|c| c.call == r.call) {
                        c.t1_s = Some(c.t0_s + r.latency_s);
                        c.text = r.text.clone();
                        c.reasoning = r.reasoning.clone();
                        c.tool_calls = r.tool_calls.clone();
                    }
                }
                Row::ModelError(r) => {
                    if let Some(c) = tl.calls.iter_mut().rev().find(|c| c.call == r.call) {
                        c.t1_s = Some(c.t0_s + r.latency_s);
                        c.text = r.error.clone();
                        c.error = true;
                    }
                }
                Row::Tool(t) => tl.tools.push(ToolUse {
                    t_s: t.t,
                    wake: t.wake,
                    name: t.name.clone(),
                    arguments: t.arguments.clone(),
                    result: t.result.clone(),
                    error: t.error,
                }),
                Row::PlanCheck(p) => tl.verdicts.push(Verdict {
                    i: tl.verdicts.len(),
                    t_s: p.t,
                    visits: p.visits.clone(),
                    return_home: p.return_home,
                    accepted: p.accepted,
                    source: p.source,
                    reason: p.reason.clone(),
                    counterexample: p.counterexample.clone(),
                    planned_time_s: p.planned_time_s,
                    planned_energy_mj: p.planned_energy_mj,
                }),
                Row::Request(r) => tl.mark(r.t, "request", r.text.clone()),
                Row::Note(n) => tl.mark(n.t, "note", n.text.clone()),
                Row::LinkLost(l) => tl.mark(l.t, "link_lost", l.cause.clone()),
                Row::End(e) => tl.mark(e.t, "end", e.end.to_string()),
                _ => {}
            }
        }
        tl
    }

    fn mark(&mut self, t_s: f64, name: &str, text: String) {
        self.marks.push(Mark { t_s, name: name.into(), text });
    }

    fn on_event(&mut self, e: &crate::runfolder::rows::EventRow) {
        let text = join(&[e.skill.as_deref(), e.code.as_deref(), e.cause.as_deref()]);
        self.mark(e.t, &e.name, text);
        match EventName::of(&e.name) {
            EventName::SkillStarted => {
                let detail: Option<StartDetail> =
                    serde_json::from_value(Value::Object(e.detail.clone())).ok();
                let skill = e.skill.clone().unwrap_or_default();
                self.skills.push(SkillSpan {
                    kind: serde_json::from_value(Value::String(skill.clone())).ok(),
                    skill,
                    target: detail.and_then(|d| d.target),
                    t0_s: e.t,
                    t1_s: None,
                    code: None,
                    cause: None,
                });
            }
            EventName::SkillEnded => {
                let open = self
                    .skills
                    .iter_mut()
                    .rev()
                    .find(|s| s.t1_s.is_none() && Some(&s.skill) == e.skill.as_ref());
                if let Some(s) = open {
                    s.t1_s = Some(e.t);
                    s.code = e.code.clone();
                    s.cause = e.cause.clone();
                }
            }
            _ => {}
        }
    }

    /// The call in flight at `t_s` (requested, reply not yet due), if any.
    pub fn thinking_at(&self, t_s: f64) -> Option<&Call> {
        self.calls.iter().rev().find(|c| c.t0_s <= t_s && c.t1_s.is_none_or(|t1| t_s < t1))
    }

    /// The last wake-up at or before `t_s`.
    pub fn wake_at(&self, t_s: f64) -> Option<&Wake> {
        self.wakes.iter().rev().find(|w| w.t_s <= t_s)
    }

    /// The skill running at `t_s`, if any.
    pub fn skill_at(&self, t_s: f64) -> Option<&SkillSpan> {
        self.skills.iter().rev().find(|s| s.t0_s <= t_s && s.t1_s.is_none_or(|t1| t_s < t1))
    }
}
