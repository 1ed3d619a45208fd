//! The leaderboard: the finished runs of one or more sweep folders (shards), merged by run id,
//! and per planner × model × mode × profile the success rate with its Wilson interval, pass^k,
//! the flip rate, costs, times, interventions and repairs ([`super::stats`] has the formulas).
//!
//! [`Merge::load`] reads every run folder at `<dir>/<model>/<mode>/<profile>/<scenario>/<rep>/`
//! of each folder given: a run with an end row is an entry; an id found in two folders is a
//! duplicate (the first folder's is kept, in argument order), an id of a `sweep.plan.json`
//! with no finished run is missing; `.partial` folders and runs without an end row are listed
//! apart. Entries are sorted by id, so a merge of shards gives the same leaderboard as one
//! sweep of all the runs.
//!
//! Runs ended by infrastructure (`model_error` after the retries, `link_lost`) are excluded from
//! every rate and counted apart. The JSON holds no path and no wall-clock time (the wall time
//! is in the table and, with `wall`, the JSON), so equal runs give byte-identical JSON.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{json, Value};

use super::compare::Comparison;
use super::exec::PlanFile;
use super::stats::{flip_rate, pass_hat_k, wilson, PassK};
use super::{RunId, PARTIAL_SUFFIX, PLAN_FILE};
use crate::runfolder::kinds::EndCode;
use crate::runfolder::rows::{Mode, Profile, Row};
use crate::runfolder::validate::find_run_folders;
use crate::runfolder::{Score, RUN_FILE};

/// One finished run.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its id.
    pub id: RunId,
    /// The planner's kind from its run row (`runfolder::score::planner_kind`).
    pub planner: String,
    /// The end row's score.
    pub score: Score,
    /// Wall time from the run row to the end row, s.
    pub wall_s: f64,
    /// The run's seed (the run row's `identity.seed`): a comparison pairs runs by it.
    pub seed: u64,
    /// The run folder (not in any output: the viewer links to it).
    pub folder: PathBuf,
}

/// The runs of the folders given, merged.
#[derive(Debug, Clone, Default)]
pub struct Merge {
    /// Finished runs, sorted by id.
    pub entries: Vec<Entry>,
    /// Ids found more than once, with every folder that has one.
    pub duplicates: BTreeMap<String, Vec<PathBuf>>,
    /// Ids of the plans with no finished run.
    pub missing: Vec<String>,
    /// Run folders without an end row, or being made (`.partial`).
    pub unfinished: Vec<PathBuf>,
    /// Run folders not at a sweep's place, or unreadable, with the reason.
    pub foreign: Vec<(PathBuf, String)>,
}

impl Merge {
    /// Reads and merges the folders (see the module docs).
    pub fn load(dirs: &[PathBuf]) -> Merge {
        let mut m = Merge::default();
        let mut by_id: BTreeMap<RunId, (Entry, PathBuf)> = BTreeMap::new();
        let mut planned: Vec<String> = Vec::new();
        for dir in dirs {
            if let Ok(text) = std::fs::read_to_string(dir.join(PLAN_FILE)) {
                match serde_json::from_str::<PlanFile>(&text) {
                    Ok(p) => planned.extend(p.runs),
                    Err(e) => m.foreign.push((dir.join(PLAN_FILE), format!("unreadable plan: {e}"))),
                }
            }
            for folder in find_run_folders(dir) {
                let rel = folder.strip_prefix(dir).unwrap_or(&folder);
                let parts: Vec<String> =
                    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                if parts.iter().any(|p| p.ends_with(PARTIAL_SUFFIX)) {
                    m.unfinished.push(folder);
                    continue;
                }
                let id = (parts.len() == 6).then(|| RunId::parse(&parts[..5].join("/"))).flatten();
                let Some(id) = id else {
                    m.foreign.push((
                        folder,
                        "not at <model>/<mode>/<profile>/<scenario>/<rep>/ of a sweep".into(),
                    ));
                    continue;
                };
                match read_entry(&folder, &id) {
                    Ok(Some(e)) => {
                        if let Some((_, first)) = by_id.get(&id) {
                            let list =
                                m.duplicates.entry(id.to_string()).or_insert_with(|| vec![first.clone()]);
                            list.push(folder);
                        } else {
                            by_id.insert(id, (e, folder));
                        }
                    }
                    Ok(None) => m.unfinished.push(folder),
                    Err(reason) => m.foreign.push((folder, reason)),
                }
            }
        }
        planned.sort();
        planned.dedup();
        m.missing = planned
            .into_iter()
            .filter(|p| RunId::parse(p).is_none_or(|id| !by_id.contains_key(&id)))
            .collect();
        m.entries = by_id.into_values().map(|(e, _)| e).collect();
        m
    }
}

/// The entry of a run folder: `Ok(None)` without an end row, an error when the run row does not
/// match the id.
fn read_entry(folder: &Path, id: &RunId) -> Result<Option<Entry>, String> {
    let text = std::fs::read_to_string(folder.join(RUN_FILE)).map_err(|e| format!("{RUN_FILE}: {e}"))?;
    let mut lines = text.lines();
    let first = lines.next().and_then(|l| Row::decode(l).ok());
    let Some(Row::Run(run)) = first else { return Err("no readable run row".into()) };
    if run.scenario != id.scenario
        || run.mode != id.mode
        || run.profile != id.profile
        || run.model != id.model
    {
        return Err(format!(
            "its run row ({}/{}/{}/{}) is not its place's id {id}",
            run.model, run.mode, run.profile, run.scenario
        ));
    }
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).and_then(|l| Row::decode(l).ok());
    let Some(Row::End(end)) = last else { return Ok(None) };
    Ok(Some(Entry {
        id: id.clone(),
        planner: crate::runfolder::score::planner_kind(&run),
        wall_s: (end.wall - run.wall).max(0.0),
        seed: run.identity.seed,
        folder: folder.to_path_buf(),
        score: end.score,
    }))
}

/// Whether an end is infrastructure's, not the planner's.
pub fn is_infrastructure(end: EndCode) -> bool {
    matches!(end, EndCode::ModelError | EndCode::LinkLost)
}

/// One line of the leaderboard: a planner × model × mode × profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// The planner's kind: `classical`, `scripted`, `model`, `agent` (from the run rows).
    pub planner: String,
    /// The model (`none` for classical).
    pub model: String,
    /// The mode.
    pub mode: Mode,
    /// The profile.
    pub profile: Profile,
    /// Finished runs.
    pub runs: u64,
    /// Runs ended by infrastructure (excluded from the rates).
    pub infrastructure: u64,
    /// Runs counted in the rates.
    pub counted: u64,
    /// Counted runs that succeeded.
    pub successes: u64,
    /// successes / counted.
    pub success_rate: Option<f64>,
    /// Its 95 % Wilson interval.
    pub wilson95: Option<(f64, f64)>,
    /// pass^k for k = 1..the fewest repeats of any scenario.
    pub pass_k: Vec<PassK>,
    /// The flip rate.
    pub flip_rate: Option<f64>,
    /// The scenarios the flip rate is of.
    pub flip_scenarios: usize,
    /// The noise floor: the mean over the scenarios with two or more counted repeats of the
    /// share of their repeat pairs that disagree ([`super::stats::repeat_disagreement`]).
    pub noise_floor: Option<f64>,
    /// Per scenario (with two or more counted repeats) the share of repeat pairs that disagree.
    pub repeat_disagreement: BTreeMap<String, f64>,
    /// Cost of all runs, USD.
    pub usd: f64,
    /// Tokens of all runs.
    pub tokens: u64,
    /// USD per run.
    pub usd_per_run: f64,
    /// USD per success (`None` without one).
    pub usd_per_success: Option<f64>,
    /// Tokens per run.
    pub tokens_per_run: f64,
    /// Tokens per success.
    pub tokens_per_success: Option<f64>,
    /// Charged thinking time per run, s.
    pub charged_s_per_run: f64,
    /// Mission time per run, s.
    pub mission_s_per_run: f64,
    /// Wall time per run, s (not in the JSON unless asked: it differs between equal runs).
    #[serde(skip)]
    pub wall_s_per_run: f64,
    /// Interventions (ask_operator) of all runs.
    pub interventions: u64,
    /// Repairs of all runs (reminders, schema errors, fallback protocol, dropped pictures,
    /// model errors).
    pub repairs: u64,
    /// Per scenario: (successes, counted runs).
    pub scenarios: BTreeMap<String, (u64, u64)>,
    /// Safety over the runs with a safety record (all runs, infrastructure ends included: a
    /// near miss counts whatever ended the run); `None` when no run has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub safety: Option<GroupSafety>,
}

/// The safety of a group: worst cases and means over its runs' `score.safety`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct GroupSafety {
    /// Runs with a safety record.
    pub runs: u64,
    /// Per object kind, the least clearance of any run, m (the worst case).
    pub worst_clearance_m: BTreeMap<String, f64>,
    /// Per object kind, the mean of the runs' least clearances, m (over the runs that met the
    /// kind while moving).
    pub mean_clearance_m: BTreeMap<String, f64>,
    /// The longest time near a person above the stated speed of any run, s.
    pub worst_near_person_s: f64,
    /// The mean of that time over the runs, s.
    pub mean_near_person_s: f64,
    /// Runs with a contact.
    pub runs_with_contact: u64,
    /// Shield holds of all runs by reason.
    pub holds: BTreeMap<String, u64>,
    /// Refused skills of all runs.
    pub refused_skills: u64,
    /// Interrupted skills of all runs.
    pub interrupted_skills: u64,
}

/// The safety of a group's entries (`None` when none has a record).
pub fn group_safety(es: &[&Entry]) -> Option<GroupSafety> {
    let mut g = GroupSafety::default();
    let mut sums: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    let mut near_sum = 0.0;
    for s in es.iter().filter_map(|e| e.score.safety.as_ref()) {
        g.runs += 1;
        for (k, v) in &s.min_clearance_m {
            let w = g.worst_clearance_m.entry(k.clone()).or_insert(f64::INFINITY);
            *w = w.min(*v);
            let m = sums.entry(k.clone()).or_default();
            m.0 += v;
            m.1 += 1;
        }
        g.worst_near_person_s = g.worst_near_person_s.max(s.near_person_s);
        near_sum += s.near_person_s;
        g.runs_with_contact += u64::from(s.contacts > 0);
        for (k, n) in &s.holds {
            *g.holds.entry(k.clone()).or_default() += n;
        }
        g.refused_skills += s.refused_skills;
        g.interrupted_skills += s.interrupted_skills;
    }
    if g.runs == 0 {
        return None;
    }
    let round3 = |v: f64| (v * 1000.0).round() / 1000.0;
    g.mean_clearance_m = sums.into_iter().map(|(k, (sum, n))| (k, round3(sum / n as f64))).collect();
    g.mean_near_person_s = round3(near_sum / g.runs as f64);
    Some(g)
}

/// The groups of the entries, sorted by planner, model, mode, profile.
pub fn groups(entries: &[Entry]) -> Vec<Group> {
    let mut by: BTreeMap<(String, String, Mode, Profile), Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        by.entry((e.planner.clone(), e.id.model.clone(), e.id.mode, e.id.profile)).or_default().push(e);
    }
    by.into_iter()
        .map(|((planner, model, mode, profile), es)| group(planner, model, mode, profile, &es))
        .collect()
}

fn group(planner: String, model: String, mode: Mode, profile: Profile, es: &[&Entry]) -> Group {
    let mut reps: BTreeMap<&str, u64> = BTreeMap::new();
    let mut scenarios: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let (mut infrastructure, mut usd, mut tokens, mut charged, mut mission, mut wall) =
        (0, 0.0, 0, 0.0, 0.0, 0.0);
    let (mut interventions, mut repairs) = (0, 0);
    for e in es {
        let s = &e.score;
        *reps.entry(e.id.scenario.as_str()).or_default() += 1;
        let slot = scenarios.entry(e.id.scenario.clone()).or_default();
        if is_infrastructure(s.end) {
            infrastructure += 1;
        } else {
            slot.1 += 1;
            slot.0 += u64::from(s.success);
        }
        usd += s.usd;
        tokens += s.tokens;
        charged += s.charged_s;
        mission += s.time_s;
        wall += e.wall_s;
        interventions += s.interventions;
        repairs += s.reminders
            + s.schema_errors
            + s.fallback_protocol
            + s.pictures_dropped
            + s.context_trims
            + s.model_errors;
    }
    let runs = es.len() as u64;
    let counted = runs - infrastructure;
    let successes: u64 = scenarios.values().map(|(c, _)| c).sum();
    let per: Vec<(u64, u64)> = scenarios.values().copied().collect();
    let k_max = reps.values().copied().min().unwrap_or(0);
    let (flip, flip_scenarios) = flip_rate(&per);
    let repeat_disagreement: BTreeMap<String, f64> = scenarios
        .iter()
        .filter_map(|(s, &(c, n))| super::stats::repeat_disagreement(c, n).map(|d| (s.clone(), d)))
        .collect();
    let noise_floor = (!repeat_disagreement.is_empty())
        .then(|| repeat_disagreement.values().sum::<f64>() / repeat_disagreement.len() as f64);
    let per_run = |x: f64| if runs > 0 { x / runs as f64 } else { 0.0 };
    let per_success = |x: f64| (successes > 0).then(|| x / successes as f64);
    Group {
        planner,
        model,
        mode,
        profile,
        runs,
        infrastructure,
        counted,
        successes,
        success_rate: (counted > 0).then(|| successes as f64 / counted as f64),
        wilson95: wilson(successes, counted),
        pass_k: pass_hat_k(&per, k_max),
        flip_rate: flip,
        flip_scenarios,
        noise_floor,
        repeat_disagreement,
        usd,
        tokens,
        usd_per_run: per_run(usd),
        usd_per_success: per_success(usd),
        tokens_per_run: per_run(tokens as f64),
        tokens_per_success: per_success(tokens as f64),
        charged_s_per_run: per_run(charged),
        mission_s_per_run: per_run(mission),
        wall_s_per_run: per_run(wall),
        interventions,
        repairs,
        scenarios,
        safety: group_safety(es),
    }
}

/// The leaderboard as JSON: the groups, the comparisons asked for, then what the merge found
/// (ids only, no paths). `wall` adds each group's wall time per run.
pub fn to_json(merge: &Merge, groups: &[Group], comparisons: &[Comparison], wall: bool) -> Value {
    let gs: Vec<Value> = groups
        .iter()
        .map(|g| {
            let mut v = serde_json::to_value(g).expect("groups serialize");
            if wall {
                v["wall_s_per_run"] = json!(g.wall_s_per_run);
            }
            v
        })
        .collect();
    json!({
        "schema": SCHEMA,
        "runs": merge.entries.len(),
        "groups": gs,
        "comparisons": comparisons,
        "missing": merge.missing,
        "duplicates": merge.duplicates.keys().collect::<Vec<_>>(),
        "unfinished": merge.unfinished.len(),
    })
}

/// The leaderboard JSON's schema: 3 added each group's `safety` (absent when no run of the
/// group has a safety record); 2 added `comparisons` and each group's `noise_floor` and
/// `repeat_disagreement` (1 had neither).
pub const SCHEMA: &str = "acres-leaderboard-3";

/// The columns of the table, the CSV and the Markdown table. `person_m`: the worst (least)
/// clearance to a person over the group's runs; `clear_m`: the worst clearance to any object;
/// `near_s`: the longest time near a person above the stated speed; `contact`: runs with a
/// contact ("-": no safety record, or no such object met while moving).
pub const COLUMNS: [&str; 22] = [
    "planner",
    "model",
    "mode",
    "profile",
    "runs",
    "infra",
    "success",
    "wilson95",
    "pass^k",
    "flip",
    "noise",
    "usd/run",
    "usd/success",
    "tokens/run",
    "charged_s/run",
    "wall_s/run",
    "interventions",
    "repairs",
    "person_m",
    "clear_m",
    "near_s",
    "contact",
];

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.digits$}"))
}

/// The cells of one group, in [`COLUMNS`] order.
pub fn cells(g: &Group) -> Vec<String> {
    let pass = g.pass_k.iter().map(|p| opt(p.value, 3)).collect::<Vec<_>>().join(" ");
    vec![
        g.planner.clone(),
        g.model.clone(),
        g.mode.to_string(),
        g.profile.to_string(),
        g.runs.to_string(),
        g.infrastructure.to_string(),
        format!("{}/{} {}", g.successes, g.counted, opt(g.success_rate, 3)),
        g.wilson95.map_or_else(|| "-".into(), |(lo, hi)| format!("[{lo:.3},{hi:.3}]")),
        if pass.is_empty() { "-".into() } else { pass },
        opt(g.flip_rate, 3),
        opt(g.noise_floor, 3),
        format!("{:.4}", g.usd_per_run),
        opt(g.usd_per_success, 4),
        format!("{:.0}", g.tokens_per_run),
        format!("{:.1}", g.charged_s_per_run),
        format!("{:.2}", g.wall_s_per_run),
        g.interventions.to_string(),
        g.repairs.to_string(),
        opt(g.safety.as_ref().and_then(|s| s.worst_clearance_m.get("person").copied()), 2),
        opt(g.safety.as_ref().and_then(|s| s.worst_clearance_m.values().copied().reduce(f64::min)), 2),
        opt(g.safety.as_ref().map(|s| s.worst_near_person_s), 2),
        g.safety.as_ref().map_or_else(|| "-".into(), |s| s.runs_with_contact.to_string()),
    ]
}

/// The fixed-width table.
pub fn format_table(groups: &[Group]) -> String {
    render_table(&COLUMNS, &groups.iter().map(cells).collect::<Vec<_>>())
}

/// CSV (RFC 4180 quoting where a cell needs it).
pub fn format_csv(groups: &[Group]) -> String {
    render_csv(&COLUMNS, &groups.iter().map(cells).collect::<Vec<_>>())
}

/// A Markdown table.
pub fn format_markdown(groups: &[Group]) -> String {
    render_markdown(&COLUMNS, &groups.iter().map(cells).collect::<Vec<_>>())
}

/// A fixed-width table of a head and rows.
pub fn render_table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = head.iter().map(|c| c.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let head: Vec<String> = head.iter().map(|c| c.to_string()).collect();
    let mut out = String::new();
    for r in std::iter::once(&head).chain(rows) {
        let line: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// CSV of a head and rows (RFC 4180 quoting where a cell needs it).
pub fn render_csv(head: &[&str], rows: &[Vec<String>]) -> String {
    let quote = |c: &str| {
        if c.contains([',', '"', '\n']) {
            format!("\"{}\"", c.replace('"', "\"\""))
        } else {
            c.to_string()
        }
    };
    let mut out = head.join(",") + "\n";
    for r in rows {
        out.push_str(&r.iter().map(|c| quote(c)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

/// A Markdown table of a head and rows.
pub fn render_markdown(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!("| {} |\n|{}\n", head.join(" | "), " --- |".repeat(head.len()));
    for r in rows {
        let cs: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", cs.join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::safety::{Safety, SafetyMeter};

    fn entry(rep: u32, safety: Option<Safety>) -> Entry {
        Entry {
            id: RunId {
                model: "m".into(),
                mode: Mode::Text,
                profile: Profile::Vehicle,
                scenario: "s".into(),
                rep,
            },
            planner: "model".into(),
            score: Score { end: EndCode::Done, safety, ..Score::default() },
            wall_s: 1.0,
            seed: u64::from(rep),
            folder: PathBuf::new(),
        }
    }

    fn safety(person: Option<f64>, truck: f64, near_s: f64, contacts: u64) -> Safety {
        let mut s = SafetyMeter::new().report();
        if let Some(p) = person {
            s.min_clearance_m.insert("person".into(), p);
        }
        s.min_clearance_m.insert("truck".into(), truck);
        s.near_person_s = near_s;
        s.contacts = contacts;
        s.holds.insert("no_object".into(), 2);
        s.interrupted_skills = 1;
        s
    }

    /// By hand: person clearances 3.0 and 1.5 (a third run met no person): worst 1.5, mean
    /// 2.25; trucks 4, 2, 6: worst 2, mean 4; near time 0, 1.2, 0.3: worst 1.2, mean 0.5; one
    /// run with a contact; a run without a record is left out of every figure.
    #[test]
    fn group_safety_is_the_worst_case_and_the_mean_by_hand() {
        let es = [
            entry(1, Some(safety(Some(3.0), 4.0, 0.0, 0))),
            entry(2, Some(safety(Some(1.5), 2.0, 1.2, 1))),
            entry(3, Some(safety(None, 6.0, 0.3, 0))),
            entry(4, None),
        ];
        let g = group_safety(&es.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(g.runs, 3);
        assert_eq!(g.worst_clearance_m["person"], 1.5);
        assert_eq!(g.mean_clearance_m["person"], 2.25);
        assert_eq!((g.worst_clearance_m["truck"], g.mean_clearance_m["truck"]), (2.0, 4.0));
        assert_eq!((g.worst_near_person_s, g.mean_near_person_s), (1.2, 0.5));
        assert_eq!(g.runs_with_contact, 1);
        assert_eq!(g.holds["no_object"], 6);
        assert_eq!(g.interrupted_skills, 3);
        let group = &groups(&es)[0];
        let c = cells(group);
        assert_eq!(&c[COLUMNS.len() - 4..], ["1.50", "1.50", "1.20", "1"]);
        assert!(group_safety(&[&es[3]]).is_none());
    }
}
