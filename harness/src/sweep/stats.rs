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
//! - [`repeat_disagreement`]: the noise floor's unit: the share of a scenario's pairs of counted
//!   repeats whose outcomes differ, c(n−c)/C(n,2).
//! - [`mcnemar_exact`]: McNemar's exact test of paired successes: the two-sided exact binomial
//!   test (p = ½) on the b + c discordant pairs, min(1, 2·Σ_{i≤min(b,c)} C(b+c,i)/2^(b+c)).
//! - [`bootstrap_mean`]: the percentile bootstrap interval of a mean of paired differences,
//!   resampled with [`SplitMix64`] from a stated seed (deterministic on every machine).

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

/// The share of pairs of `n` counted repeats with `c` successes whose outcomes differ:
/// c(n−c)/C(n,2); `None` below two repeats.
///
/// ```
/// assert_eq!(acres_harness::sweep::stats::repeat_disagreement(1, 3), Some(2.0 / 3.0));
/// ```
pub fn repeat_disagreement(c: u64, n: u64) -> Option<f64> {
    (n >= 2).then(|| (c * (n - c)) as f64 / choose(n, 2))
}

/// McNemar's exact two-sided p-value of `b` pairs where only A succeeded and `c` where only B
/// did (1 when there is no discordant pair). Exact in integers up to 120 discordant pairs, in
/// logarithms above.
///
/// ```
/// assert_eq!(acres_harness::sweep::stats::mcnemar_exact(1, 8), 0.0390625);
/// ```
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    let m = b.min(c);
    if n == 0 {
        return 1.0;
    }
    let tail = if n <= 120 {
        let mut term: u128 = 1; // C(n, 0)
        let mut sum: u128 = 0;
        for i in 0..=m {
            sum += term;
            term = term * u128::from(n - i) / u128::from(i + 1);
        }
        sum as f64 / 2f64.powi(n as i32)
    } else {
        let (mut ln_c, ln2n) = (0.0f64, n as f64 * std::f64::consts::LN_2);
        let mut sum = 0.0;
        for i in 0..=m {
            sum += (ln_c - ln2n).exp();
            ln_c += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        }
        sum
    };
    (2.0 * tail).min(1.0)
}

/// SplitMix64 (Steele, Lea and Flood 2014): the bootstrap's generator, ours so that an interval
/// is the same on every machine and every build.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An index below `n` (> 0): the high 64 bits of the 128-bit product (Lemire's).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// The bootstrap's resampling count.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// The bootstrap's seed.
pub const BOOTSTRAP_SEED: u64 = 0;

/// The 95 % percentile bootstrap interval of the mean of `values`: `resamples` resamples of
/// `values.len()` draws with replacement from [`SplitMix64`] seeded with `seed` (draw j of
/// resample r is the generator's (r·n + j)-th index), their means sorted, and the nearest-rank
/// 2.5th and 97.5th percentiles (the ⌈0.025·R⌉-th and ⌈0.975·R⌉-th smallest). `None` for no
/// value or no resample.
pub fn bootstrap_mean(values: &[f64], resamples: usize, seed: u64) -> Option<(f64, f64)> {
    let n = values.len();
    if n == 0 || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64(seed);
    let mut means: Vec<f64> =
        (0..resamples).map(|_| (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64).collect();
    means.sort_by(f64::total_cmp);
    let rank = |q: f64| ((q * resamples as f64).ceil() as usize).clamp(1, resamples) - 1;
    Some((means[rank(0.025)], means[rank(0.975)]))
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

    #[test]
    fn mcnemar_matches_hand_computed_p_values() {
        // b=1, c=8: 2·(C(9,0)+C(9,1))/2⁹ = 20/512.
        assert_eq!(mcnemar_exact(1, 8), 0.0390625);
        assert_eq!(mcnemar_exact(8, 1), 0.0390625);
        // No discordant pair, or a tie: p = 1.
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        // b=0, c=5: 2/32; b=2, c=10: 2·(1+12+66)/4096.
        assert_eq!(mcnemar_exact(0, 5), 0.0625);
        assert_eq!(mcnemar_exact(2, 10), 158.0 / 4096.0);
        // The logarithmic branch agrees with the exact one where both apply, and is tiny far out.
        let exact = mcnemar_exact(40, 80);
        let (b, c) = (40u64, 80u64);
        let (mut ln_c, mut sum) = (0.0f64, 0.0);
        for i in 0..=b {
            sum += (ln_c - 120.0 * std::f64::consts::LN_2).exp();
            ln_c += ((b + c - i) as f64).ln() - ((i + 1) as f64).ln();
        }
        assert!((exact - 2.0 * sum).abs() < 1e-12, "{exact} {}", 2.0 * sum);
        assert!(mcnemar_exact(100, 300) < 1e-20);
        assert_eq!(mcnemar_exact(500, 500), 1.0);
    }

    #[test]
    fn splitmix64_gives_the_reference_sequence() {
        // The reference outputs of SplitMix64 from state 0.
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn the_bootstrap_matches_an_independent_computation() {
        // All pairs equal: every resample's mean is 0; all A wins: 1.
        assert_eq!(bootstrap_mean(&[0.0; 7], 1000, 0), Some((0.0, 0.0)));
        assert_eq!(bootstrap_mean(&[1.0; 3], 1000, 0), Some((1.0, 1.0)));
        assert_eq!(bootstrap_mean(&[], 1000, 0), None);
        // 1 pair A wins, 8 B wins, 1 tie (d = +1, −1 ×8, 0), 10,000 resamples, seed 0: the
        // interval computed apart (a Python script of the same definition) is [−1.0, −0.3].
        let mut d = vec![1.0];
        d.extend([-1.0; 8]);
        d.push(0.0);
        assert_eq!(bootstrap_mean(&d, 10_000, 0), Some((-1.0, -0.3)));
        assert_eq!(repeat_disagreement(0, 3), Some(0.0));
        assert_eq!(repeat_disagreement(2, 4), Some(4.0 / 6.0));
        assert_eq!(repeat_disagreement(1, 1), None);
    }
}
