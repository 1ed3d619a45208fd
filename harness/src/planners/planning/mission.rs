//! The classical mission planner: the best visit order of a set of fields, and the removal of one
//! field at a time while the planned time or energy is above a limit.
//!
//! The order minimises the table time of the whole mission (home, each field's goto and scout,
//! return), then the table energy. It is exact (Held–Karp dynamic programming over subsets) for up
//! to [`MAX_EXACT_FIELDS`] fields.

use acres_farm::HOME;
use serde::Serialize;

use super::costs::{CostError, CostTable, PlanCost};
use acres_farm::route::Leg;

/// The largest number of fields ordered exactly.
pub const MAX_EXACT_FIELDS: usize = 12;

/// A planning failure.
#[derive(Debug, thiserror::Error)]
pub enum MissionError {
    /// A leg lacks a cost.
    #[error(transparent)]
    Cost(#[from] CostError),
    /// Too many fields for the exact planner.
    #[error("{0} fields: the exact planner takes at most {MAX_EXACT_FIELDS}")]
    TooMany(usize),
}

/// The best order of `fields` and its cost. Among tours of equal cost the result is the one the
/// dynamic programme keeps first: deterministic for a given `fields` order.
pub fn best_order(fields: &[String], table: &CostTable) -> Result<(Vec<String>, PlanCost), MissionError> {
    let n = fields.len();
    if n == 0 {
        return Ok((Vec::new(), table.mission_cost(&[], true)?));
    }
    if n > MAX_EXACT_FIELDS {
        return Err(MissionError::TooMany(n));
    }
    let cost = |leg: Leg| -> Result<(f64, f64), MissionError> {
        let c = table.leg(&leg)?;
        Ok((c.time_s, c.energy_mj))
    };
    let add = |a: (f64, f64), b: (f64, f64)| (a.0 + b.0, a.1 + b.1);
    let better = |a: (f64, f64), b: (f64, f64)| a.0 < b.0 || (a.0 == b.0 && a.1 < b.1);
    // Per field: scout; per pair: goto; from home: goto; to home: return.
    let mut scout = Vec::with_capacity(n);
    let mut from_home = Vec::with_capacity(n);
    let mut to_home = Vec::with_capacity(n);
    for f in fields {
        scout.push(cost(Leg::scout(f))?);
        from_home.push(cost(Leg::goto(HOME, f))?);
        to_home.push(cost(Leg::ret(f))?);
    }
    let mut between = vec![vec![(0.0, 0.0); n]; n];
    for i in 0..n {
        for j in 0..n {
            if i != j {
                between[i][j] = cost(Leg::goto(&fields[i], &fields[j]))?;
            }
        }
    }
    let full = 1usize << n;
    let inf = (f64::INFINITY, f64::INFINITY);
    let mut dp = vec![inf; full * n];
    let mut prev = vec![usize::MAX; full * n];
    for j in 0..n {
        dp[(1 << j) * n + j] = add(from_home[j], scout[j]);
    }
    for mask in 1..full {
        for j in 0..n {
            if mask & (1 << j) == 0 || dp[mask * n + j].0.is_infinite() {
                continue;
            }
            let here = dp[mask * n + j];
            for k in 0..n {
                if mask & (1 << k) != 0 {
                    continue;
                }
                let next = mask | (1 << k);
                let c = add(here, add(between[j][k], scout[k]));
                if better(c, dp[next * n + k]) {
                    dp[next * n + k] = c;
                    prev[next * n + k] = j;
                }
            }
        }
    }
    let last_mask = full - 1;
    let mut best = (inf, 0usize);
    for j in 0..n {
        let c = add(dp[last_mask * n + j], to_home[j]);
        if better(c, best.0) {
            best = (c, j);
        }
    }
    let mut order = Vec::with_capacity(n);
    let (mut mask, mut j) = (last_mask, best.1);
    loop {
        order.push(fields[j].clone());
        let p = prev[mask * n + j];
        mask &= !(1 << j);
        if p == usize::MAX {
            break;
        }
        j = p;
    }
    order.reverse();
    let cost = table.mission_cost(&order, true)?;
    Ok((order, cost))
}

/// A mission that fits its limits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissionPlan {
    /// The fields in visit order.
    pub order: Vec<String>,
    /// The fields removed to fit the limits, in removal order.
    pub removed: Vec<String>,
    /// The cost of `order`.
    pub cost: PlanCost,
}

/// The best order of `fields`; while its planned time is above `time_limit_s` or its planned
/// energy above `energy_limit_mj`, removes one field and orders again. The field removed is the
/// one whose removal leaves the least excess over the limits (the sum of planned/limit − 1 over
/// the limits passed), so a removal that fits every limit is preferred; ties by the lower
/// planned time, then energy, then the first in `fields`.
pub fn plan_within_limits(
    fields: &[String],
    table: &CostTable,
    time_limit_s: Option<f64>,
    energy_limit_mj: Option<f64>,
) -> Result<MissionPlan, MissionError> {
    let excess = |c: &PlanCost| {
        let over = |v: f64, l: Option<f64>| {
            l.map_or(0.0, |l| if l > 0.0 { (v / l - 1.0).max(0.0) } else { f64::INFINITY })
        };
        over(c.planned_time_s, time_limit_s) + over(c.planned_energy_mj, energy_limit_mj)
    };
    let mut kept: Vec<String> = fields.to_vec();
    let mut removed = Vec::new();
    let (mut order, mut cost) = best_order(&kept, table)?;
    while excess(&cost) > 0.0 && !kept.is_empty() {
        let mut best: Option<(usize, Vec<String>, PlanCost)> = None;
        for i in 0..kept.len() {
            let mut rest = kept.clone();
            rest.remove(i);
            let (o, c) = best_order(&rest, table)?;
            let key = (excess(&c), c.planned_time_s, c.planned_energy_mj);
            let better = best.as_ref().is_none_or(|b| {
                let bk = (excess(&b.2), b.2.planned_time_s, b.2.planned_energy_mj);
                key.0 < bk.0 || (key.0 == bk.0 && (key.1 < bk.1 || (key.1 == bk.1 && key.2 < bk.2)))
            });
            if better {
                best = Some((i, o, c));
            }
        }
        let (i, o, c) = best.expect("kept is not empty");
        removed.push(kept.remove(i));
        order = o;
        cost = c;
    }
    Ok(MissionPlan { order, removed, cost })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planners::planning::costs::{LegCost, COSTS_SCHEMA};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn table(n: usize, vals: &[f64]) -> (Vec<String>, CostTable) {
        let fields: Vec<String> = (0..n).map(|i| format!("F{}", 51 + i)).collect();
        let mut legs = BTreeMap::new();
        let mut k = 0;
        let mut next = || {
            k += 1;
            vals[k % vals.len()] + k as f64 * 1e-7
        };
        for f in &fields {
            for leg in [Leg::scout(f), Leg::goto("H", f), Leg::ret(f)] {
                let t = next();
                legs.insert(leg.key(), LegCost { time_s: t, energy_mj: t / 10.0, length_m: t });
            }
            for g in &fields {
                if f != g {
                    let t = next();
                    legs.insert(
                        Leg::goto(f, g).key(),
                        LegCost { time_s: t, energy_mj: t / 7.0, length_m: t },
                    );
                }
            }
        }
        (fields, CostTable { schema: COSTS_SCHEMA.into(), map: "m".into(), condition: "dry".into(), legs })
    }

    fn permutations(v: &[String]) -> Vec<Vec<String>> {
        if v.len() <= 1 {
            return vec![v.to_vec()];
        }
        let mut out = Vec::new();
        for i in 0..v.len() {
            let mut rest = v.to_vec();
            let x = rest.remove(i);
            for mut p in permutations(&rest) {
                p.insert(0, x.clone());
                out.push(p);
            }
        }
        out
    }

    proptest! {
        #[test]
        fn best_order_equals_brute_force(n in 1usize..=6, vals in proptest::collection::vec(1.0f64..500.0, 10..60)) {
            let (fields, t) = table(n, &vals);
            let (order, cost) = best_order(&fields, &t).unwrap();
            let all: Vec<(f64, Vec<String>)> = permutations(&fields)
                .into_iter()
                .map(|p| (t.mission_cost(&p, true).unwrap().table_time_s, p))
                .collect();
            let min = all.iter().map(|a| a.0).fold(f64::INFINITY, f64::min);
            prop_assert!((cost.table_time_s - min).abs() < 1e-6, "not optimal: {} vs {}", cost.table_time_s, min);
            // The order is the brute-force one; where several orders tie, it is one of them.
            let optimal: Vec<&Vec<String>> = all.iter().filter(|a| a.0 - min < 1e-6).map(|a| &a.1).collect();
            prop_assert!(optimal.contains(&&order), "{order:?} is not among {optimal:?}");
            if optimal.len() == 1 {
                prop_assert_eq!(&order, optimal[0]);
            }
        }
    }

    #[test]
    fn removal_follows_the_limit_that_is_exceeded() {
        // A is slow but cheap, B fast but costly: over an energy limit, B goes, not A.
        let mut legs = BTreeMap::new();
        let mut put = |k: &str, t: f64, e: f64| {
            legs.insert(k.to_string(), LegCost { time_s: t, energy_mj: e, length_m: 1.0 });
        };
        put("goto:H>A", 100.0, 1.0);
        put("scout:A", 200.0, 1.0);
        put("return:A>H", 100.0, 1.0);
        put("goto:H>B", 10.0, 3.0);
        put("scout:B", 20.0, 3.0);
        put("return:B>H", 10.0, 3.0);
        put("goto:A>B", 50.0, 2.0);
        put("goto:B>A", 50.0, 2.0);
        let t = CostTable { schema: COSTS_SCHEMA.into(), map: "m".into(), condition: "dry".into(), legs };
        let fields = vec!["A".to_string(), "B".to_string()];
        let plan = plan_within_limits(&fields, &t, None, Some(10.0)).unwrap();
        assert_eq!(plan.removed, ["B"]);
        assert_eq!(plan.order, ["A"]);
        assert!(plan.cost.planned_energy_mj <= 10.0);
    }

    #[test]
    fn removes_fields_while_over_the_limit() {
        let (fields, t) = table(4, &[100.0, 30.0, 250.0, 80.0, 40.0]);
        let all = best_order(&fields, &t).unwrap().1;
        let plan = plan_within_limits(&fields, &t, Some(all.planned_time_s * 0.7), None).unwrap();
        assert!(!plan.removed.is_empty());
        assert!(plan.cost.planned_time_s <= all.planned_time_s * 0.7);
        assert_eq!(plan.order.len() + plan.removed.len(), 4);
        let none = plan_within_limits(&fields, &t, Some(all.planned_time_s), None).unwrap();
        assert!(none.removed.is_empty());
    }
}
