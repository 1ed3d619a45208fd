//! The learned skill's policy: inference time per control tick of the shipped `edge_pass`
//! policy (RTen, in-process), p50 and p99 over the observations of a drive, and the load
//! (parse, type, optimise) once. Prints figures; asserts no timing.
//!
//! ```text
//! cargo bench -p acres_vehicle --bench policy
//! ```

use std::path::Path;
use std::time::Instant;

use acres_vehicle::learned::LearnedSkill;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/learned/edge_pass");
    let t0 = Instant::now();
    let skill = LearnedSkill::load(&dir).expect("the shipped skill loads");
    let load_ms = t0.elapsed().as_secs_f64() * 1e3;
    let n = skill.spec.observation.len();
    let mut times_us = Vec::with_capacity(20_000);
    for i in 0..20_000u32 {
        // Observations sweeping the range a pass sees (speed, cap, look-ahead point, metres left).
        let a = f64::from(i) * 0.001;
        let obs: Vec<f32> = (0..n).map(|k| (1.0 + (a + k as f64).sin()) as f32).collect();
        let t = Instant::now();
        let cmd = skill.policy.run(&obs).expect("the policy runs");
        times_us.push(t.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(cmd);
    }
    times_us.sort_by(f64::total_cmp);
    let q = |p: f64| times_us[((times_us.len() - 1) as f64 * p) as usize];
    println!("edge_pass policy ({n} inputs): load + optimise {load_ms:.1} ms once");
    println!(
        "inference per tick over {} ticks: p50 {:.1} us, p99 {:.1} us, max {:.1} us (control tick 50 ms, budget {} ms)",
        times_us.len(),
        q(0.5),
        q(0.99),
        times_us[times_us.len() - 1],
        skill.spec.tick_budget_ms
    );
}
