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

/// The score of a run folded from its rows, one row at a time: what `score` shows for a folder
/// without an end row (end `incomplete`). The rows give the mission time reached, wake-ups,
/// tool calls, refused plans, interventions, tokens, cost, repairs, model errors and the
/// reasoning's state, each equal to the end row's (`harness/tests/cli.rs` checks every shipped
/// run); the rest of a score (the charged time, result codes, reminders, schema errors, fuel,
/// scouted fields) needs facts the rows do not carry, so a folded score leaves it at zero.
#[derive(Debug, Clone)]
pub struct ScoreFold {
    score: Score,
    text_replies: u64,
    hidden_replies: u64,
}

impl ScoreFold {
    /// An empty fold for a run of `profile`.
    pub fn new(profile: Profile) -> Self {
        ScoreFold {
            score: Score { profile, end: EndCode::Incomplete, ..Score::default() },
            text_replies: 0,
            hidden_replies: 0,
        }
    }

    /// Folds one row in.
    pub fn row(&mut self, row: &Row) {
        let s = &mut self.score;
        s.time_s = s.time_s.max(row.t());
        match row {
            Row::Wake(_) => s.wake_ups += 1,
            Row::Tool(t) => {
                s.tool_calls += 1;
                s.interventions += u64::from(t.name == "ask_operator" && !t.error);
            }
            Row::PlanCheck(p) => s.refused_plans += u64::from(!p.accepted),
            Row::ModelError(e) => {
                s.model_errors += 1;
                s.fallback_protocol += e.repairs.fallback_protocol;
                s.pictures_dropped += e.repairs.pictures_dropped;
                s.context_trims += e.repairs.context_trims;
                s.constrained_calls += e.repairs.constrained_calls;
            }
            Row::ModelReply(reply) => {
                let u = reply.usage;
                s.tokens += u.total();
                s.usage += u;
                s.usd += reply.usd;
                s.fallback_protocol += reply.repairs.fallback_protocol;
                s.pictures_dropped += reply.repairs.pictures_dropped;
                s.context_trims += reply.repairs.context_trims;
                s.constrained_calls += reply.repairs.constrained_calls;
                self.text_replies += u64::from(reply.reasoning.is_some());
                self.hidden_replies += u64::from(reply.reasoning_hidden);
            }
            _ => {}
        }
    }

    /// The score folded so far.
    pub fn score(&self) -> Score {
        let mut s = self.score.clone();
        s.reasoning_logged = ReasoningLogged::of(self.text_replies, self.hidden_replies);
        s
    }
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
