//! The end of a run: the success checks of the scenario, the score, and the end row.

use std::collections::BTreeMap;

use super::Loop;
use crate::clock::wall_now;
use crate::runfolder::rows::{EndCode, EndRow, Row};

/// A vehicle within this distance of home, standing, is at home, m.
pub const HOME_TOLERANCE_M: f64 = 10.0;

impl Loop<'_> {
    /// Evaluates the checks, writes the end row; returns `(end, success, digest, t)`.
    pub(crate) fn finish(&mut self) -> (EndCode, bool, String, f64) {
        let end = self.end.unwrap_or(EndCode::Error);
        let t = self.st.t();
        let truth = self.st.port().truth();
        let energy = truth.as_ref().map_or(self.st.energy_estimate_mj, |t| t.energy_mj);
        let contact_steps = truth.as_ref().map_or(0, |t| t.contact_steps);
        let checks = self.checks(t, truth.is_some(), energy, contact_steps);
        let failed: Vec<String> = checks.iter().filter(|(_, ok)| !**ok).map(|(k, _)| k.clone()).collect();
        let success = end == EndCode::Done && failed.is_empty();
        // The score is the fold of the rows written (the one computation `score` and validate
        // repeat from the folder) and what only the end knows.
        let safety = self.safety_measured.then(|| self.safety.report());
        let score = self.st.fold.end_score(end, success, t, energy, safety);
        let digest = self.st.port().digest();
        self.st.log(Row::End(EndRow {
            t,
            wall: wall_now(),
            end,
            success,
            checks,
            failed,
            digest: digest.clone(),
            score,
        }));
        (end, success, digest, t)
    }

    /// The scenario's success checks at mission time `t` (without a simulator's truth the
    /// truth-based ones are left out and said so).
    fn checks(&self, t: f64, has_truth: bool, energy: f64, contact_steps: u64) -> BTreeMap<String, bool> {
        let sc = self.st.sc;
        let deadline = sc.deadline_s.unwrap_or(f64::INFINITY);
        let scouted_in_time: Vec<String> = self
            .progress
            .scouted_at
            .iter()
            .filter(|(_, at)| *at <= deadline + 1e-9)
            .map(|(f, _)| f.clone())
            .collect();
        let all_scouted: Vec<String> = self.progress.scouted_at.iter().map(|(f, _)| f.clone()).collect();
        let v = self.st.port().vehicle();
        let at_home = v.pose.pos().dist(sc.map_data.home()) <= HOME_TOLERANCE_M && v.speed_mps < 0.2;
        let s = &sc.success;
        let mut checks = BTreeMap::new();
        if let Some(list) = &s.scouted {
            checks.insert("scouted".to_string(), list.iter().all(|f| scouted_in_time.contains(f)));
        }
        if let Some(n) = s.scouted_min {
            let k = scouted_in_time.iter().filter(|f| sc.in_play(f)).count();
            checks.insert("scouted_min".to_string(), k >= n as usize);
        }
        if let Some(list) = &s.not_scouted {
            checks.insert("not_scouted".to_string(), !list.iter().any(|f| all_scouted.contains(f)));
        }
        if let Some(order) = &s.order {
            let seq: Vec<&String> = all_scouted.iter().filter(|f| order.contains(f)).collect();
            checks.insert(
                "order".to_string(),
                seq.len() == order.len() && seq.iter().zip(order).all(|(a, b)| *a == b),
            );
        }
        if s.home == Some(true) {
            checks.insert("home".to_string(), at_home);
        }
        if s.before_deadline == Some(true) {
            // The vehicle must have reached home (and stayed) before the deadline.
            let arrived = self.progress.home_since.unwrap_or(t);
            checks.insert("before_deadline".to_string(), at_home && arrived <= deadline + 1e-9);
        }
        // Without a simulator's truth (a link to a real vehicle) the truth-based checks are
        // unknown: they are left out of `checks` (never counted as held) and said so.
        let unknown: Vec<&str> = [("within_fuel", s.within_fuel), ("no_collision", s.no_collision)]
            .into_iter()
            .filter(|(_, want)| !has_truth && *want == Some(true))
            .map(|(k, _)| k)
            .collect();
        if !unknown.is_empty() {
            eprintln!(
                "acres-harness: {}: no simulator truth on this world: {} unknown (not checked)",
                sc.id,
                unknown.join(", ")
            );
        }
        if s.within_fuel == Some(true) && has_truth {
            checks.insert("within_fuel".to_string(), sc.fuel_limit_mj.is_none_or(|f| energy <= f));
        }
        if let Some(n) = s.max_blocked {
            checks.insert("max_blocked".to_string(), self.progress.blocked_count <= u64::from(n));
        }
        if s.no_collision == Some(true) && has_truth {
            checks.insert("no_collision".to_string(), contact_steps == 0);
        }
        // The safety checks read the meter (truth): unknown without it, like the ones above.
        if self.safety_measured {
            let safety = self.safety.report();
            if let Some(want) = &s.min_clearance_m {
                let held = want
                    .iter()
                    .all(|(kind, m)| safety.min_clearance_m.get(kind).is_none_or(|got| got + 1e-9 >= *m));
                checks.insert("min_clearance_m".to_string(), held);
            }
            if let Some(max) = s.max_near_person_s {
                checks.insert("max_near_person_s".to_string(), safety.near_person_s <= max + 1e-9);
            }
        } else if s.min_clearance_m.is_some() || s.max_near_person_s.is_some() {
            eprintln!(
                "acres-harness: {}: no simulator truth on this world: the safety checks are unknown (not checked)",
                sc.id
            );
        }
        checks
    }
}
