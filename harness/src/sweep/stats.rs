//! The leaderboard's statistics, each a pure function of counts.
//!
//! - [`wilson`]: the 95 % Wilson score interval of a success rate: with p = c/n and z = 1.96,
//!   centre (p + z²/2n) / (1 + z²/n), half-width z/(1 + z²/n) · √(p(1−p)/n + z²/4n²).
//! - [`pass_hat_k`]: pass^k, the chance that k repeats drawn without replacement from a
//!   scenario's n counted repeats all succeed, C(c,k)/C(n,k), averaged over the scenarios. A
//!   scenario with fewer than k counted repeats (its other runs ended by infrastructure) is left
//!   out of that k's average, and the number averaged is given with it.
//! - [`flip_rate`]: the share of scenarios (with two or more counted repeats) whose repeats
//!   disagree: some succeeded and some did not.

use serde::Serialize;

/// z of a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The 95 % Wilson interval of `successes` in `n` trials, `None` for no trial.
///
/// ```
/// let (lo, hi) = acres_harness::sweep::stats::wilson(5, 10).unwrap();
/// assert!((lo - 0.236_593).abs() < 1e-6 && (hi - 0.763_407).abs() < 1e-6);
/// ```
pub fn wilson(successes: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let (c, n) = (successes as f64, n as f64);
    let p = c / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// C(n, k) as a float (exact for the small numbers of repeats a sweep has).
pub fn choose(n: u64, k: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// pass^k at one k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassK {
    /// k.
    pub k: u64,
    /// The mean over the scenarios averaged of C(c,k)/C(n,k); `None` when no scenario has k
    /// counted repeats.
    pub value: Option<f64>,
    /// The scenarios averaged (those with at least k counted repeats).
    pub scenarios: usize,
}

/// pass^k for k = 1..=`k_max` from each scenario's (successes, counted repeats).
pub fn pass_hat_k(per_scenario: &[(u64, u64)], k_max: u64) -> Vec<PassK> {
    (1..=k_max)
        .map(|k| {
            let terms: Vec<f64> = per_scenario
                .iter()
                .filter(|(_, n)| *n >= k)
                .map(|&(c, n)| choose(c, k) / choose(n, k))
                .collect();
            let value = (!terms.is_empty()).then(|| terms.iter().sum::<f64>() / terms.len() as f64);
            PassK { k, value, scenarios: terms.len() }
        })
        .collect()
}

/// The flip rate and the scenarios it is of: scenarios with two or more counted repeats whose
/// repeats disagree, over those scenarios. `None` when no scenario has two counted repeats.
pub fn flip_rate(per_scenario: &[(u64, u64)]) -> (Option<f64>, usize) {
    let eligible: Vec<&(u64, u64)> = per_scenario.iter().filter(|(_, n)| *n >= 2).collect();
    let flips = eligible.iter().filter(|(c, n)| *c > 0 && c < n).count();
    let rate = (!eligible.is_empty()).then(|| flips as f64 / eligible.len() as f64);
    (rate, eligible.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn wilson_matches_hand_computed_intervals() {
        // 0 of 3: centre z²/6 / (1 + z²/3), half the same: [0, 2·centre].
        let z2 = Z95 * Z95;
        let (lo, hi) = wilson(0, 3).unwrap();
        assert!(close(lo, 0.0) && close(hi, (z2 / 3.0) / (1.0 + z2 / 3.0)), "{lo} {hi}");
        let (lo, hi) = wilson(3, 3).unwrap();
        assert!(close(lo, 1.0 - (z2 / 3.0) / (1.0 + z2 / 3.0)) && close(hi, 1.0), "{lo} {hi}");
        let (lo, hi) = wilson(8, 10).unwrap();
        assert!((lo - 0.490_162).abs() < 1e-6 && (hi - 0.943_318).abs() < 1e-6, "{lo} {hi}");
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn pass_hat_k_is_the_mean_of_c_choose_k_over_n_choose_k() {
        assert!(close(choose(5, 2), 10.0) && close(choose(3, 4), 0.0) && close(choose(4, 0), 1.0));
        // Scenario A 2 of 3, scenario B 3 of 3, scenario C 1 of 2 (its third run infrastructure).
        let p = pass_hat_k(&[(2, 3), (3, 3), (1, 2)], 3);
        assert!(close(p[0].value.unwrap(), (2.0 / 3.0 + 1.0 + 0.5) / 3.0));
        assert_eq!(p[0].scenarios, 3);
        assert!(close(p[1].value.unwrap(), (1.0 / 3.0 + 1.0 + 0.0) / 3.0));
        // k = 3 is more than C's two counted repeats: C is left out, A gives 0, B gives 1.
        assert_eq!(p[2].scenarios, 2);
        assert!(close(p[2].value.unwrap(), 0.5));
        assert_eq!(pass_hat_k(&[(1, 1)], 2)[1], PassK { k: 2, value: None, scenarios: 0 });
    }

    #[test]
    fn the_flip_rate_counts_scenarios_whose_repeats_disagree() {
        assert_eq!(flip_rate(&[(2, 3), (3, 3), (0, 3), (1, 1)]), (Some(1.0 / 3.0), 3));
        assert_eq!(flip_rate(&[(1, 1)]), (None, 0));
    }
}
