//! `launch/link_sim.sh run` end to end: each shipped link scenario succeeds with the scripted
//! planner through the core node, the vehicle node, the bridge and the harness, and `validate`
//! accepts its folder. Asserts the outcome and prints the time each took (bounded loosely).
//!
//! NETWORK SAFETY: the script runs its DDS processes in a private network namespace; this test
//! also runs only inside one (see `util`).

mod util;

use std::process::Command;
use std::time::{Duration, Instant};

use util::*;

fn run(name: &str) {
    let t0 = Instant::now();
    let out = std::env::temp_dir().join(format!("acres-link-sim-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new(repo().join("launch/link_sim.sh"))
        .arg("run")
        .arg(scenario(name))
        .arg(&out)
        .current_dir(repo())
        .env("ACRES_BIN_DIR", bin("acres-harness").parent().unwrap())
        .status()
        .expect("link_sim.sh");
    let took = t0.elapsed();
    eprintln!("{name}: exit {:?} after {took:?}", status.code());
    assert_eq!(status.code(), Some(0), "{name} did not succeed; logs in {}", out.display());
    assert!(validates(&out.join(format!("{name}__checked__scripted"))), "{name}: the folder validates");
    assert!(took < Duration::from_secs(400), "{name} took {took:?}");
}

#[test]
fn link_sim_f56_succeeds_and_validates() {
    if in_private_netns() {
        run("link_sim_f56");
    }
}

#[test]
fn the_other_link_scenarios_succeed() {
    if in_private_netns() {
        for name in ["link_sim_f53", "link_sim_two_fields", "link_sim_truck_on_lane"] {
            run(name);
        }
    }
}
