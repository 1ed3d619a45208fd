//! The paired comparison of two leaderboard groups (`leaderboard --compare A B`, `--baseline`).
//!
//! A group's key is `planner/model/mode/profile` (or `model/mode/profile` when one planner has
//! it). The runs of A and B are paired by scenario and seed (the run row's `identity.seed`, the
//! repeat's seed); two runs of one side with the same scenario and seed pair in repeat order. A
//! run with no partner, and both runs of a pair where either ended by infrastructure, are
//! unpaired: named with the reason and excluded from every figure.
//!
//! On the pairs: McNemar's exact test on success ([`mcnemar_exact`]), the paired difference of
//! the success rate (A − B) with its percentile bootstrap interval over the pairs
//! ([`bootstrap_mean`], [`BOOTSTRAP_RESAMPLES`] resamples from seed [`BOOTSTRAP_SEED`]), pass^k
//! of both, the scenarios that flip (pairs A won, pairs B won, by scenario), and the differences
//! of USD and mission time per success. The noise floor is the larger of the two sides' mean
//! repeat disagreement over the paired scenarios; a difference smaller than it is flagged.

use std::collections::BTreeMap;

use serde::Serialize;

use super::board::{is_infrastructure, Entry, Group};
use super::stats::{bootstrap_mean, mcnemar_exact, pass_hat_k, PassK, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED};

/// A group's key: `planner/model/mode/profile`.
pub fn key_of(g: &Group) -> String {
    format!("{}/{}/{}/{}", g.planner, g.model, g.mode, g.profile)
}

/// The group a key names: `planner/model/mode/profile`, or `model/mode/profile` when exactly
/// one group has it. The error lists the keys there are.
pub fn resolve<'g>(key: &str, groups: &'g [Group]) -> Result<&'g Group, String> {
    let found: Vec<&Group> = groups
        .iter()
        .filter(|g| {
            let full = key_of(g);
            full == key || full.split_once('/').is_some_and(|(_, rest)| rest == key)
        })
        .collect();
    let keys = || groups.iter().map(key_of).collect::<Vec<_>>().join(", ");
    match found[..] {
        [g] => Ok(g),
        [] => Err(format!("no group {key} in the leaderboard (groups: {})", keys())),
        _ => Err(format!("{key} names {} groups: give planner/model/mode/profile ({})", found.len(), keys())),
    }
}

/// One side of a comparison, on the paired runs only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// The group's key.
    pub key: String,
    /// Paired runs that succeeded.
    pub successes: u64,
    /// successes / pairs.
    pub success_rate: Option<f64>,
    /// pass^k over the paired runs, k = 1..the fewest pairs of any scenario.
    pub pass_k: Vec<PassK>,
    /// USD of the paired runs per success.
    pub usd_per_success: Option<f64>,
    /// Mission time of the paired runs per success, s.
    pub mission_s_per_success: Option<f64>,
    /// The group's repeat disagreement averaged over the paired scenarios that have it.
    pub noise_floor: Option<f64>,
}

/// A scenario's pairs won by one side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flip {
    /// The scenario.
    pub scenario: String,
    /// Pairs where this side succeeded and the other did not.
    pub pairs: u64,
}

/// A run left out of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unpaired {
    /// `a` or `b`.
    pub side: String,
    /// The run id.
    pub id: String,
    /// Why.
    pub reason: String,
}

/// The paired comparison of A and B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// A.
    pub a: Side,
    /// B.
    pub b: Side,
    /// Pairs counted.
    pub pairs: u64,
    /// Pairs both succeeded.
    pub both: u64,
    /// Pairs neither succeeded.
    pub neither: u64,
    /// Pairs only A succeeded (McNemar's b).
    pub a_only: u64,
    /// Pairs only B succeeded (McNemar's c).
    pub b_only: u64,
    /// McNemar's exact two-sided p-value.
    pub mcnemar_p: f64,
    /// A's success rate − B's on the pairs, (a_only − b_only) / pairs.
    pub difference: Option<f64>,
    /// Its 95 % paired percentile bootstrap interval.
    pub bootstrap95: Option<(f64, f64)>,
    /// The bootstrap's resamples.
    pub bootstrap_resamples: usize,
    /// The bootstrap's seed.
    pub bootstrap_seed: u64,
    /// The larger of the two sides' noise floors.
    pub noise_floor: Option<f64>,
    /// Whether |difference| is smaller than the noise floor (`None` without a floor).
    pub within_noise: Option<bool>,
    /// Scenarios with pairs only A succeeded in.
    pub a_wins: Vec<Flip>,
    /// Scenarios with pairs only B succeeded in.
    pub b_wins: Vec<Flip>,
    /// A's USD per success − B's.
    pub usd_per_success_difference: Option<f64>,
    /// A's mission time per success − B's, s.
    pub mission_s_per_success_difference: Option<f64>,
    /// The runs left out, named, with the reason.
    pub unpaired: Vec<Unpaired>,
}

fn members<'e>(entries: &'e [Entry], g: &Group) -> BTreeMap<(String, u64), Vec<&'e Entry>> {
    let mut m: BTreeMap<(String, u64), Vec<&Entry>> = BTreeMap::new();
    for e in entries.iter().filter(|e| {
        e.planner == g.planner && e.id.model == g.model && e.id.mode == g.mode && e.id.profile == g.profile
    }) {
        m.entry((e.id.scenario.clone(), e.seed)).or_default().push(e);
    }
    for list in m.values_mut() {
        list.sort_by(|x, y| x.id.cmp(&y.id));
    }
    m
}

#[derive(Default)]
struct Tally {
    per_scenario: BTreeMap<String, (u64, u64)>,
    successes: u64,
    usd: f64,
    mission: f64,
}

impl Tally {
    fn add(&mut self, e: &Entry) {
        let slot = self.per_scenario.entry(e.id.scenario.clone()).or_default();
        slot.0 += u64::from(e.score.success);
        slot.1 += 1;
        self.successes += u64::from(e.score.success);
        self.usd += e.score.usd;
        self.mission += e.score.time_s;
    }

    fn side(&self, g: &Group, pairs: u64) -> Side {
        let per: Vec<(u64, u64)> = self.per_scenario.values().copied().collect();
        let k_max = per.iter().map(|(_, n)| *n).min().unwrap_or(0);
        let floors: Vec<f64> =
            self.per_scenario.keys().filter_map(|s| g.repeat_disagreement.get(s).copied()).collect();
        let per_success = |x: f64| (self.successes > 0).then(|| x / self.successes as f64);
        Side {
            key: key_of(g),
            successes: self.successes,
            success_rate: (pairs > 0).then(|| self.successes as f64 / pairs as f64),
            pass_k: pass_hat_k(&per, k_max),
            usd_per_success: per_success(self.usd),
            mission_s_per_success: per_success(self.mission),
            noise_floor: (!floors.is_empty()).then(|| floors.iter().sum::<f64>() / floors.len() as f64),
        }
    }
}

/// Compares A and B on their paired runs (see the module docs).
pub fn compare(entries: &[Entry], a: &Group, b: &Group) -> Comparison {
    let p = pair_up(entries, a, b);
    let pairs = p.diffs.len() as u64;
    let (a_only, b_only) = p.flips.values().fold((0, 0), |(x, y), (b, c)| (x + b, y + c));
    let wins = |pick: fn(&(u64, u64)) -> u64| -> Vec<Flip> {
        p.flips
            .iter()
            .filter(|(_, f)| pick(f) > 0)
            .map(|(s, f)| Flip { scenario: s.clone(), pairs: pick(f) })
            .collect()
    };
    let (sa, sb) = (p.ta.side(a, pairs), p.tb.side(b, pairs));
    let difference = (pairs > 0).then(|| (a_only as f64 - b_only as f64) / pairs as f64);
    let noise_floor = match (sa.noise_floor, sb.noise_floor) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    };
    let sub = |x: Option<f64>, y: Option<f64>| x.zip(y).map(|(x, y)| x - y);
    Comparison {
        pairs,
        both: p.both,
        neither: p.neither,
        a_only,
        b_only,
        mcnemar_p: mcnemar_exact(a_only, b_only),
        difference,
        bootstrap95: bootstrap_mean(&p.diffs, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED),
        bootstrap_resamples: BOOTSTRAP_RESAMPLES,
        bootstrap_seed: BOOTSTRAP_SEED,
        noise_floor,
        within_noise: noise_floor.zip(difference).map(|(f, d)| d.abs() < f),
        a_wins: wins(|f| f.0),
        b_wins: wins(|f| f.1),
        usd_per_success_difference: sub(sa.usd_per_success, sb.usd_per_success),
        mission_s_per_success_difference: sub(sa.mission_s_per_success, sb.mission_s_per_success),
        unpaired: p.unpaired,
        a: sa,
        b: sb,
    }
}

/// The runs of A and B paired by scenario and seed, and what the pairs add up to.
#[derive(Default)]
struct Pairing {
    ta: Tally,
    tb: Tally,
    unpaired: Vec<Unpaired>,
    /// Per scenario: (pairs A alone succeeded, pairs B alone succeeded).
    flips: BTreeMap<String, (u64, u64)>,
    /// Per pair: A's success minus B's (1, 0 or -1).
    diffs: Vec<f64>,
    both: u64,
    neither: u64,
}

/// Pairs the runs of `a` and `b` (the i-th run of a scenario and seed with the i-th); a run
/// without a partner, or a pair with a run ended by infrastructure, is left unpaired with why.
fn pair_up(entries: &[Entry], a: &Group, b: &Group) -> Pairing {
    let (ma, mb) = (members(entries, a), members(entries, b));
    let mut keys: Vec<&(String, u64)> = ma.keys().chain(mb.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut p = Pairing::default();
    let none: Vec<&Entry> = Vec::new();
    let left =
        |side: &str, e: &Entry, reason: String| Unpaired { side: side.into(), id: e.id.to_string(), reason };
    for k in keys {
        let (la, lb) = (ma.get(k).unwrap_or(&none), mb.get(k).unwrap_or(&none));
        for (i, ea) in la.iter().enumerate() {
            let Some(eb) = lb.get(i) else {
                p.unpaired.push(left("a", ea, format!("B has no run of {} with seed {}", k.0, k.1)));
                continue;
            };
            if let Some(reason) = infrastructure_end(ea, eb) {
                p.unpaired.push(left("a", ea, reason.clone()));
                p.unpaired.push(left("b", eb, reason));
                continue;
            }
            p.ta.add(ea);
            p.tb.add(eb);
            let (sa, sb) = (ea.score.success, eb.score.success);
            let f = p.flips.entry(k.0.clone()).or_default();
            match (sa, sb) {
                (true, true) => p.both += 1,
                (false, false) => p.neither += 1,
                (true, false) => f.0 += 1,
                (false, true) => f.1 += 1,
            }
            p.diffs.push(f64::from(u8::from(sa)) - f64::from(u8::from(sb)));
        }
        for eb in lb.iter().skip(la.len()) {
            p.unpaired.push(left("b", eb, format!("A has no run of {} with seed {}", k.0, k.1)));
        }
    }
    p
}

/// Why a pair is left out when one of its runs ended by infrastructure (not the planner's doing).
fn infrastructure_end(ea: &Entry, eb: &Entry) -> Option<String> {
    [("a", ea), ("b", eb)].into_iter().find(|(_, e)| is_infrastructure(e.score.end)).map(|(s, e)| {
        format!("the pair's run of {} ({}) ended by infrastructure ({})", s.to_uppercase(), e.id, e.score.end)
    })
}

/// The columns of the comparison's table, CSV and Markdown.
pub const COLUMNS: [&str; 16] = [
    "a",
    "b",
    "pairs",
    "both/neither",
    "a_only",
    "b_only",
    "mcnemar_p",
    "difference",
    "bootstrap95",
    "noise",
    "a_pass^k",
    "b_pass^k",
    "a_wins",
    "b_wins",
    "usd/success a-b",
    "mission_s/success a-b",
];

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:+.digits$}"))
}

/// The cells of one comparison, in [`COLUMNS`] order (the unpaired count follows the pairs).
pub fn cells(c: &Comparison) -> Vec<String> {
    let pass = |s: &Side| {
        let p: Vec<String> =
            s.pass_k.iter().map(|p| p.value.map_or_else(|| "-".into(), |v| format!("{v:.3}"))).collect();
        if p.is_empty() {
            "-".into()
        } else {
            p.join(" ")
        }
    };
    let wins = |w: &[Flip]| {
        if w.is_empty() {
            "-".into()
        } else {
            w.iter().map(|f| format!("{}:{}", f.scenario, f.pairs)).collect::<Vec<_>>().join(" ")
        }
    };
    let noise = match (c.noise_floor, c.within_noise) {
        (Some(f), Some(true)) => format!("{f:.3} WITHIN NOISE"),
        (Some(f), _) => format!("{f:.3}"),
        (None, _) => "-".into(),
    };
    vec![
        c.a.key.clone(),
        c.b.key.clone(),
        if c.unpaired.is_empty() {
            c.pairs.to_string()
        } else {
            format!("{} ({} unpaired)", c.pairs, c.unpaired.len())
        },
        format!("{}/{}", c.both, c.neither),
        c.a_only.to_string(),
        c.b_only.to_string(),
        format!("{:.4}", c.mcnemar_p),
        opt(c.difference, 3),
        c.bootstrap95.map_or_else(|| "-".into(), |(lo, hi)| format!("[{lo:+.3},{hi:+.3}]")),
        noise,
        pass(&c.a),
        pass(&c.b),
        wins(&c.a_wins),
        wins(&c.b_wins),
        opt(c.usd_per_success_difference, 4),
        opt(c.mission_s_per_success_difference, 1),
    ]
}

/// The comparisons' rows.
pub fn rows(cs: &[Comparison]) -> Vec<Vec<String>> {
    cs.iter().map(cells).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runfolder::kinds::EndCode;
    use crate::runfolder::rows::{Mode, Profile};
    use crate::runfolder::Score;
    use crate::sweep::board::groups;
    use crate::sweep::RunId;

    fn entry(model: &str, scenario: &str, seed: u64, end: EndCode, success: bool) -> Entry {
        let (usd, time_s) = if model == "m1" { (0.1, 100.0) } else { (0.3, 50.0) };
        Entry {
            id: RunId {
                model: model.into(),
                mode: Mode::Text,
                profile: Profile::Vehicle,
                scenario: scenario.into(),
                rep: seed as u32,
            },
            planner: "model".into(),
            score: Score { success, end, usd, time_s, ..Score::default() },
            wall_s: 1.0,
            seed,
            folder: std::path::PathBuf::new(),
        }
    }

    /// S1: A ✓✓✗, B ✗✓✗; S2: A ✗✗, B ✓✓; S3: A ✓ alone; S4: A ✓, B a model error.
    fn fixture() -> Vec<Entry> {
        let (d, me) = (EndCode::Done, EndCode::ModelError);
        let mut v = Vec::new();
        for (seed, a, b) in [(1, true, false), (2, true, true), (3, false, false)] {
            v.push(entry("m1", "S1", seed, d, a));
            v.push(entry("m2", "S1", seed, d, b));
        }
        for seed in [1, 2] {
            v.push(entry("m1", "S2", seed, d, false));
            v.push(entry("m2", "S2", seed, d, true));
        }
        v.push(entry("m1", "S3", 1, d, true));
        v.push(entry("m1", "S4", 1, d, true));
        v.push(entry("m2", "S4", 1, me, false));
        v.sort_by(|x, y| x.id.cmp(&y.id));
        v
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn a_fixture_gives_the_hand_computed_comparison() {
        let es = fixture();
        let gs = groups(&es);
        let (a, b) =
            (resolve("m1/text/vehicle", &gs).unwrap(), resolve("model/m2/text/vehicle", &gs).unwrap());
        let c = compare(&es, a, b);
        assert_eq!((c.pairs, c.both, c.neither, c.a_only, c.b_only), (5, 1, 1, 1, 2));
        // b = 1, c = 2: 2·(C(3,0) + C(3,1))/2³ = 1.
        assert_eq!(c.mcnemar_p, 1.0);
        assert!(close(c.difference, -0.2));
        // d = (+1, 0, 0, −1, −1) in (scenario, seed) order, 10,000 resamples from seed 0,
        // computed apart with the same definition.
        assert_eq!(c.bootstrap95, Some((-0.8, 0.4)));
        assert_eq!(c.a_wins, vec![Flip { scenario: "S1".into(), pairs: 1 }]);
        assert_eq!(c.b_wins, vec![Flip { scenario: "S2".into(), pairs: 2 }]);
        // pass^k on the pairs: A S1 2/3, S2 0/2; B S1 1/3, S2 2/2.
        let pk = |s: &Side| s.pass_k.iter().map(|p| p.value.unwrap()).collect::<Vec<_>>();
        let (pa, pb) = (pk(&c.a), pk(&c.b));
        assert!(close(Some(pa[0]), 1.0 / 3.0) && close(Some(pa[1]), 1.0 / 6.0), "{pa:?}");
        assert!(close(Some(pb[0]), 2.0 / 3.0) && close(Some(pb[1]), 0.5), "{pb:?}");
        // USD: A 0.5 for 2 successes, B 1.5 for 3; mission time: A 500 s for 2, B 250 s for 3.
        assert!(close(c.usd_per_success_difference, 0.25 - 0.5));
        assert!(close(c.mission_s_per_success_difference, 250.0 - 250.0 / 3.0));
        // Noise: both sides' S1 repeats disagree in 2 of 3 pairs, S2's in none: floor 1/3 > 0.2.
        assert!(close(c.noise_floor, 1.0 / 3.0) && c.within_noise == Some(true));
        let named: Vec<(&str, &str)> = c.unpaired.iter().map(|u| (u.side.as_str(), u.id.as_str())).collect();
        assert_eq!(
            named,
            [("a", "m1/text/vehicle/S3/1"), ("a", "m1/text/vehicle/S4/1"), ("b", "m2/text/vehicle/S4/1")]
        );
        assert!(c.unpaired[0].reason.contains("B has no run of S3 with seed 1"), "{:?}", c.unpaired);
        assert!(c.unpaired[1].reason.contains("ended by infrastructure (model_error)"), "{:?}", c.unpaired);
        let row = cells(&c);
        assert_eq!(row[2], "5 (3 unpaired)");
        assert_eq!(row[9], "0.333 WITHIN NOISE");
        assert_eq!(row[12], "S1:1");
    }

    #[test]
    fn a_group_against_itself_is_all_ties() {
        let es = fixture();
        let gs = groups(&es);
        let a = resolve("m1/text/vehicle", &gs).unwrap();
        let c = compare(&es, a, a);
        assert_eq!((c.pairs, c.a_only, c.b_only, c.mcnemar_p), (7, 0, 0, 1.0));
        assert_eq!((c.difference, c.bootstrap95), (Some(0.0), Some((0.0, 0.0))));
        assert!(c.a_wins.is_empty() && c.b_wins.is_empty() && c.unpaired.is_empty());
        assert_eq!(c.usd_per_success_difference, Some(0.0));
    }

    #[test]
    fn keys_name_one_group_or_fail_with_the_list() {
        let es = fixture();
        let gs = groups(&es);
        assert_eq!(key_of(resolve("m2/text/vehicle", &gs).unwrap()), "model/m2/text/vehicle");
        let e = resolve("m3/text/vehicle", &gs).unwrap_err();
        assert!(e.contains("no group m3/text/vehicle") && e.contains("model/m1/text/vehicle"), "{e}");
    }
}
