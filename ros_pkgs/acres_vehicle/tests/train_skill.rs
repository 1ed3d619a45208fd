//! The retraining path of a learned skill, end to end: `tools/train_skill.py train` fits a policy
//! with numpy on a CSV of the shape `cargo run -p acres_vehicle --example skill_data` prints and
//! writes it as ONNX with `policy_check.json`; RTen loads that model and gives the numpy
//! network's outputs to 1e-5. And `train_skill.py fixture constant` writes a model RTen runs to
//! the constant it was given. A real `python3` process with the pinned numpy and onnx.
//!
//! Ignored by the plain `cargo test` (it needs numpy and onnx); the test command runs it, and it
//! fails without them (`tests/support/require.rs`).

#[path = "../../../tests/support/require.rs"]
mod require;
use std::path::{Path, PathBuf};
use std::process::Command;

use acres_vehicle::learned::Policy;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn train_skill(args: &[&str]) {
    let out = Command::new(require::python3())
        .arg(root().join("tools/train_skill.py"))
        .args(args)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "train_skill.py {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("acres_train_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The tests that need what `cargo` does not bring (see `require`): ignored by the plain
/// `cargo test`, run by `tools/test.sh` (`-- --ignored needs_tools::`), failing when it is missing.
mod needs_tools {
    use super::*;

    #[test]
    #[ignore = "needs numpy and onnx in the test venv: run by tools/test.sh"]
    fn a_policy_trained_by_the_script_runs_in_rten_as_in_numpy() {
        require::python("numpy, onnx");
        let dir = temp_dir("fit");
        // A drive's rows in the shape skill_data prints: the observation, then the two commands (a
        // smooth function of the observation, as the follower's are).
        let names = ["speed_mps", "speed_cap_mps", "lookahead_x_m", "lookahead_y_m", "remaining_m"];
        let mut csv = format!("{},cmd_speed_mps,cmd_yaw_rate_rps\n", names.join(","));
        for i in 0..600 {
            let t = f64::from(i) * 0.05;
            let obs = [1.0 + 0.2 * t.sin(), 1.2, 4.0 + 0.5 * t.cos(), 0.8 * (0.7 * t).sin(), 300.0 - 0.5 * t];
            let speed = obs[1].min(0.9 + 0.05 * obs[2]);
            let yaw = 0.4 * obs[3] / obs[2];
            let row: Vec<String> = obs.iter().chain([speed, yaw].iter()).map(|v| format!("{v:.6}")).collect();
            csv.push_str(&row.join(","));
            csv.push('\n');
        }
        let data = dir.join("drives.csv");
        std::fs::write(&data, csv).unwrap();
        let model = dir.join("policy.onnx");
        train_skill(&["train", &data.display().to_string(), &model.display().to_string()]);

        let check: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("policy_check.json")).unwrap()).unwrap();
        assert_eq!(check["observation"], serde_json::json!(names));
        let policy = Policy::load(&model, names.len()).expect("RTen loads the trained model");
        let inputs = check["inputs"].as_array().unwrap();
        assert_eq!(inputs.len(), 8);
        for (x, want) in inputs.iter().zip(check["outputs"].as_array().unwrap()) {
            let x: Vec<f32> = x.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
            let got = policy.run(&x).unwrap();
            for (g, w) in got.iter().zip(want.as_array().unwrap()) {
                assert!((f64::from(*g) - w.as_f64().unwrap()).abs() < 1e-5, "{got:?} vs {want}");
            }
        }
        // The fit is a fit: the network follows the commands it was shown.
        assert!(check["rmse"]["speed_mps"].as_f64().unwrap() < 0.05, "{}", check["rmse"]);
        assert!(check["rmse"]["yaw_rate_rps"].as_f64().unwrap() < 0.05, "{}", check["rmse"]);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    #[ignore = "needs numpy and onnx in the test venv: run by tools/test.sh"]
    fn a_constant_fixture_gives_its_constant() {
        require::python("numpy, onnx");
        let dir = temp_dir("const");
        let model = dir.join("constant.onnx");
        train_skill(&["fixture", "constant", "0.7", "-0.1", "5", &model.display().to_string()]);
        let policy = Policy::load(&model, 5).unwrap();
        assert_eq!(policy.run(&[3.0, 1.0, 2.0, -1.0, 50.0]).unwrap(), [0.7, -0.1]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
