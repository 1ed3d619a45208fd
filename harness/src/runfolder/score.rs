//! The score of a run: the [`Score`] of the end row, the score table and the JSON scores.
//!
//! [`load_scores`] reads every run folder below a path (as validate finds them) and takes the
//! scenario, the mode, the model and the profile from the `run` row and the score from the
//! `end` row, and the planner's kind ([`planner_kind`]) from the run row's `planner`. A folder
//! without an end row (a run going on, or killed) appears with the end `incomplete`, its time, wake-ups, tool calls, model errors and tokens counted from its rows.
//! A folder whose first row is not a readable `run` row is left out (validate reports it). The
//! model calls of the metering proxy (`proxy.jsonl`, an agent's own model calls) are added to
//! the tokens and USD: an agent run is scored on them like a model run.
//!
//! [`format_table`] gives one fixed-width line for each run and a summary line; [`to_json`] gives
//! the full scores, sorted by folder, in a stable order.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use acres_vehicle::ResultCode;

use super::kinds::{EndCode, Mode, Profile, ReasoningLogged};
use super::rows::{Row, Usage};
use super::validate::find_run_folders;
use super::RUN_FILE;

/// The score of one run, as written in the end row.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Score {
    /// The input profile.
    pub profile: Profile,
    /// Whether every check of the scenario holds.
    pub success: bool,
    /// How the run ended (the end code).
    pub end: EndCode,
    /// The scouted fields in scout order.
    pub scouted: Vec<String>,
    /// The mission time at the end, s.
    pub time_s: f64,
    /// The thinking time charged on the mission clock, s.
    pub charged_s: f64,
    /// The fuel energy of the simulator, MJ.
    pub fuel_mj: f64,
    /// The result codes of the skills and their counts (`{"blocked": 1, "succeeded": 4}`).
    pub codes: BTreeMap<ResultCode, u64>,
    /// Plans refused by the plan checker or the harness.
    pub refused_plans: u64,
    /// Wake-ups of the planner.
    pub wake_ups: u64,
    /// Tool calls of the planner.
    pub tool_calls: u64,
    /// Tokens of all model calls: input, output, cache read and cache write.
    pub tokens: u64,
    /// The same tokens by kind.
    pub usage: Usage,
    /// The estimated cost, USD.
    pub usd: f64,
    /// Uses of ask_operator.
    pub interventions: u64,
    /// The state of the reasoning text in the log.
    pub reasoning_logged: ReasoningLogged,
    /// Repairs: reminders sent.
    pub reminders: u64,
    /// Repairs: arguments against the schema, or unknown tools.
    pub schema_errors: u64,
    /// Repairs: tool calls read from text, or repair turns.
    pub fallback_protocol: u64,
    /// Repairs: pictures replaced by a line of text.
    pub pictures_dropped: u64,
    /// Repairs: exchanges left out of the history to fit the context window (absent in rows
    /// written before context management: 0).
    #[serde(default)]
    pub context_trims: u64,
    /// Repairs: tool calls that came as a schema-constrained JSON object (absent in rows written
    /// before `tools = "constrained"`: 0).
    #[serde(default)]
    pub constrained_calls: u64,
    /// Repairs: model calls that gave no reply.
    pub model_errors: u64,
    /// Safety measured from the simulator's truth (`crate::world::safety`): absent without a
    /// truth (a link world) and in folders written before it (versioned by its `version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety: Option<crate::world::safety::Safety>,
}

/// One line of the score table: a run folder and its score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreLine {
    /// The run folder, relative to the path given to [`load_scores`] (`/`-separated).
    pub folder: String,
    /// The scenario id.
    pub scenario: String,
    /// The planner's kind (`classical`, `scripted`, `model`, `agent`, `replay`): see
    /// [`planner_kind`].
    pub planner: String,
    /// The mode.
    pub mode: Mode,
    /// The model configuration name.
    pub model: String,
    /// The input profile.
    pub profile: Profile,
    /// The score of the end row, or a partial one with the end `incomplete`; with the
    /// metering proxy's calls (`proxy.jsonl`) added to its tokens and USD.
    pub score: Score,
    /// The model calls the metering proxy recorded (`proxy.jsonl`), counted in `score`.
    #[serde(skip_serializing_if = "is_zero")]
    pub proxy_calls: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The scores of every run folder at or below `path`, sorted by folder.
pub fn load_scores(path: &Path) -> Vec<ScoreLine> {
    let mut lines: Vec<ScoreLine> = find_run_folders(path)
        .into_iter()
        .filter_map(|folder| {
            let relative = folder.strip_prefix(path).ok().filter(|r| !r.as_os_str().is_empty());
            let name = match relative {
                Some(r) => {
                    r.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
                }
                None => folder
                    .file_name()
                    .map_or_else(|| folder.display().to_string(), |n| n.to_string_lossy().into()),
            };
            load_one(&folder, name)
        })
        .collect();
    lines.sort_by(|a, b| a.folder.cmp(&b.folder));
    lines
}

/// The score of a run folded from its rows, one row at a time: the one computation of a score.
/// The harness feeds it every row it writes and takes the end row's score from it
/// ([`ScoreFold::end_score`]); `score` and validate fold a folder's rows the same way.
///
/// Rows of `rows_version` 2 (the run row's key, [`crate::runfolder::rows::ROWS_VERSION`]) carry
/// every fact of the score: the time charged for each call (`charged_s` of `model_reply` and
/// `model_error`), cut calls (`cut`), result codes (`skill_ended` events, the skill server's reply
/// on a `tool` row, a classical rule's refused request), reminders (`model_send`'s `reminder`),
/// schema errors (`tool`'s `schema_error`) and the fields scouted (`field_scouted` events). The
/// end row adds what only the end knows: the end code, success, the fuel and the safety measure.
/// Folded before the end row, the score is the run's so far, with the end `incomplete`. Rows of
/// version 1 lack those keys: their fold leaves the charged time, codes, reminders and schema
/// errors at zero (their end row's score stands as written).
#[derive(Debug, Clone, Default)]
pub struct ScoreFold {
    score: Score,
    text_replies: u64,
    hidden_replies: u64,
    /// The end row's score, once folded.
    ended: Option<Score>,
}

impl ScoreFold {
    /// An empty fold for a run of `profile`.
    pub fn new(profile: Profile) -> Self {
        ScoreFold {
            score: Score { profile, end: EndCode::Incomplete, ..Score::default() },
            ..ScoreFold::default()
        }
    }

    /// Folds one row in.
    pub fn row(&mut self, row: &Row) {
        let s = &mut self.score;
        s.time_s = s.time_s.max(row.t());
        match row {
            Row::Run(r) => s.profile = r.profile,
            Row::Wake(_) => s.wake_ups += 1,
            Row::ModelSend(m) => s.reminders += u64::from(m.reminder),
            Row::Tool(t) => {
                s.tool_calls += 1;
                s.interventions += u64::from(t.name == "ask_operator" && !t.error);
                s.schema_errors += u64::from(t.schema_error);
                if let Some(c) = t.code {
                    *s.codes.entry(c).or_default() += 1;
                }
            }
            Row::PlanCheck(p) => s.refused_plans += u64::from(!p.accepted),
            Row::Event(e) => fold_event(s, e),
            Row::ModelError(e) => {
                s.model_errors += 1;
                s.charged_s += e.charged_s.unwrap_or(0.0);
                add_repairs(s, &e.repairs);
            }
            Row::ModelReply(reply) => {
                let u = reply.usage;
                s.tokens += u.total();
                s.usage += u;
                s.usd += reply.usd;
                s.charged_s += reply.charged_s.unwrap_or(0.0);
                s.model_errors += u64::from(reply.cut);
                add_repairs(s, &reply.repairs);
                self.text_replies += u64::from(reply.reasoning.is_some());
                self.hidden_replies += u64::from(reply.reasoning_hidden && reply.reasoning.is_none());
            }
            Row::End(end) => {
                let (fuel_mj, safety) = (end.score.fuel_mj, end.score.safety.clone());
                self.ended = Some(self.end_score(end.end, end.success, end.t, fuel_mj, safety));
            }
            _ => {}
        }
    }

    /// The score folded so far: the end row's once it is folded, else the run's so far with the
    /// end `incomplete`.
    pub fn score(&self) -> Score {
        if let Some(s) = &self.ended {
            return s.clone();
        }
        let mut s = self.score.clone();
        s.reasoning_logged = ReasoningLogged::of(self.text_replies, self.hidden_replies);
        s.charged_s = round(s.charged_s, 3);
        s
    }

    /// The end row's score: the rows folded so far and what only the end knows (the end code,
    /// success, the end time `t`, the fuel, the safety measure).
    pub fn end_score(
        &self,
        end: EndCode,
        success: bool,
        t: f64,
        fuel_mj: f64,
        safety: Option<crate::world::safety::Safety>,
    ) -> Score {
        let mut s = self.score();
        s.end = end;
        s.success = success;
        s.time_s = round(t, 3);
        s.fuel_mj = round(fuel_mj, 3);
        s.safety = safety;
        s
    }
}

/// Folds an event row: the result code of a skill that ended (`failed` without one), of a
/// classical rule's refused request, and the fields scouted.
fn fold_event(s: &mut Score, e: &super::rows::EventRow) {
    let code = || e.code.as_deref().and_then(|c| serde_json::from_value::<ResultCode>(Value::from(c)).ok());
    match e.name.as_str() {
        "skill_ended" => *s.codes.entry(code().unwrap_or(ResultCode::Failed)).or_default() += 1,
        "classical_rule" => {
            if let Some(c) = code() {
                *s.codes.entry(c).or_default() += 1;
            }
        }
        "field_scouted" => {
            if let Some(f) = e.detail.get("field").and_then(Value::as_str) {
                s.scouted.push(f.to_string());
            }
        }
        _ => {}
    }
}

fn add_repairs(s: &mut Score, r: &super::calls::Repairs) {
    s.fallback_protocol += r.fallback_protocol;
    s.pictures_dropped += r.pictures_dropped;
    s.context_trims += r.context_trims;
    s.constrained_calls += r.constrained_calls;
}

fn round(v: f64, d: i32) -> f64 {
    let k = 10f64.powi(d);
    (v * k).round() / k
}

/// The score line of one folder, or `None` without a readable run row.
fn load_one(folder: &Path, name: String) -> Option<ScoreLine> {
    let text = fs::read(folder.join(RUN_FILE)).ok()?;
    let text = String::from_utf8_lossy(&text);
    let mut rows = text.lines().filter_map(|line| Row::decode(line).ok());
    let Some(Row::Run(run)) = rows.next() else { return None };
    let mut fold = ScoreFold::new(run.profile);
    let mut last = None;
    for row in rows {
        fold.row(&row);
        last = Some(row);
    }
    let mut score = match last {
        Some(Row::End(end)) => end.score,
        _ => fold.score(),
    };
    // An unreadable proxy file counts nothing here; validate names its problems.
    let proxy = super::proxy::read_rows(folder).unwrap_or_default();
    let (usage, usd, proxy_calls) = super::proxy::totals(&proxy);
    score.tokens += usage.total();
    score.usage += usage;
    score.usd += usd;
    Some(ScoreLine {
        folder: name,
        planner: planner_kind(&run),
        scenario: run.scenario,
        mode: run.mode,
        model: run.model,
        profile: run.profile,
        score,
        proxy_calls,
    })
}

/// The planner's kind of a run: the run row's `planner.kind`; for a run row without one (written
/// before it was recorded), `classical` in that mode, `scripted` for the model `scripted`, else
/// `model`. The score table and the leaderboard key on it × model × scenario.
pub fn planner_kind(run: &super::rows::RunRow) -> String {
    match &run.planner {
        Some(p) => p.kind.as_str().into(),
        None if run.mode == Mode::Classical => "classical".into(),
        None if run.model == "scripted" => "scripted".into(),
        None => "model".into(),
    }
}

/// The headers of the score table, in column order.
pub const COLUMNS: [&str; 24] = [
    "scenario",
    "planner",
    "mode",
    "model",
    "profile",
    "success",
    "end",
    "scouted",
    "time_s",
    "charged_s",
    "fuel_mj",
    "codes",
    "refused_plans",
    "wake_ups",
    "tool_calls",
    "tokens",
    "usd",
    "interventions",
    "reasoning_logged",
    "reminders",
    "schema_errors",
    "fallback_protocol",
    "pictures_dropped",
    "model_errors",
];

/// The cells of one line, in the order of [`COLUMNS`]; numbers are right-aligned.
fn cells(line: &ScoreLine) -> [(String, bool); 24] {
    let s = &line.score;
    let list = |v: &[String]| if v.is_empty() { "-".to_string() } else { v.join(",") };
    let codes = if s.codes.is_empty() {
        "-".to_string()
    } else {
        s.codes.iter().map(|(code, n)| format!("{}:{n}", code.as_str())).collect::<Vec<_>>().join(",")
    };
    let text = |v: String| (v, false);
    let num = |v: String| (v, true);
    [
        text(line.scenario.clone()),
        text(line.planner.clone()),
        text(line.mode.to_string()),
        text(line.model.clone()),
        text(line.profile.to_string()),
        text(if s.success { "yes" } else { "no" }.into()),
        text(s.end.to_string()),
        text(list(&s.scouted)),
        num(format!("{:.1}", s.time_s)),
        num(format!("{:.1}", s.charged_s)),
        num(format!("{:.2}", s.fuel_mj)),
        text(codes),
        num(s.refused_plans.to_string()),
        num(s.wake_ups.to_string()),
        num(s.tool_calls.to_string()),
        num(s.tokens.to_string()),
        num(format!("{:.4}", s.usd)),
        num(s.interventions.to_string()),
        text(s.reasoning_logged.to_string()),
        num(s.reminders.to_string()),
        num(s.schema_errors.to_string()),
        num(s.fallback_protocol.to_string()),
        num(s.pictures_dropped.to_string()),
        num(s.model_errors.to_string()),
    ]
}

/// The score table: a header, one line for each run (in the given order), and the summary line
/// `N runs, K succeeded`. Columns are two spaces apart; no cell has a space.
///
/// ```
/// use acres_harness::runfolder::score::{format_table, COLUMNS};
/// let table = format_table(&[]);
/// assert!(table.starts_with(COLUMNS[0]));
/// assert!(table.ends_with("0 runs, 0 succeeded\n"));
/// ```
pub fn format_table(lines: &[ScoreLine]) -> String {
    let header: Vec<(String, bool)> = COLUMNS.iter().map(|c| (c.to_string(), false)).collect();
    let body: Vec<Vec<(String, bool)>> = lines.iter().map(|l| cells(l).to_vec()).collect();
    let mut widths: Vec<usize> = COLUMNS.iter().map(|c| c.len()).collect();
    for row in &body {
        for (w, (cell, _)) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&body) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|((cell, right), w)| {
                let cell = cell.replace(char::is_whitespace, "_");
                if *right {
                    format!("{cell:>w$}")
                } else {
                    format!("{cell:<w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let succeeded = lines.iter().filter(|l| l.score.success).count();
    out.push_str(&format!("{} runs, {succeeded} succeeded\n", lines.len()));
    out
}

/// The full scores as JSON: an array of `{folder, scenario, planner, mode, model, profile, score}`
/// (and `proxy_calls` when the metering proxy recorded some),
/// sorted by folder, with the keys in a fixed order.
pub fn to_json(lines: &[ScoreLine]) -> Value {
    let mut sorted: Vec<&ScoreLine> = lines.iter().collect();
    sorted.sort_by(|a, b| a.folder.cmp(&b.folder));
    serde_json::to_value(sorted).expect("scores always serialize")
}
