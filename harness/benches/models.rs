//! The model clients' speed, printed (no timing is asserted anywhere):
//!
//! 1. **Client overhead per call.** A session of each protocol calls an in-process stub server
//!    on 127.0.0.1 that answers at once, with a history like a run's (a wake message, tool
//!    results, one picture). Printed: the round trip per call, and the client's own work in it
//!    (building the request body and reading the reply, timed without the network): the part
//!    that is the client's, excluding the server's latency. Target ≤ 1 ms.
//! 2. **`--concurrent` scaling.** `run --concurrent 256` of one process against the stub server
//!    (a separate process) answering after 1 s each: 256 runs whose time is model latency (each
//!    makes five calls and drives nothing). Printed: runs finished per minute against the ideal
//!    (every run in parallel: 256 runs per 5 s), and the process's peak memory (VmHWM).
//!    Target ≥ 90 % of ideal.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use acres_harness::planners::models::chat::{ChatSession, Wire};
use acres_harness::planners::models::config::ModelConfig;
use acres_harness::planners::models::stub::script::Script;
use acres_harness::planners::models::{anthropic::AnthropicWire, openai::OpenAiWire};
use acres_harness::planners::{Block, CallCtx, Session};
use acres_harness::runfolder::rows::Mode;

fn config(provider: &str, url: &str) -> ModelConfig {
    let base = if provider == "openai" { format!("{url}/v1") } else { url.to_string() };
    let text = format!("provider = \"{provider}\"\nmodel = \"stub-model\"\nbase_url = \"{base}\"\n");
    ModelConfig::parse(&text, Path::new("bench.toml")).expect("a bench model file")
}

/// Calls of one session in the overhead measurement (a wake-up's worth of a long run).
const CALLS: usize = 40;
/// Sessions measured.
const SESSIONS: usize = 8;

fn overhead<W: Wire + 'static>(name: &str, cfg: ModelConfig, new_wire: impl Fn() -> W) {
    let tools = acres_harness::tools::tools_for(
        Mode::Visual,
        acres_harness::runfolder::rows::Profile::Vehicle,
        false,
    );
    let png = Arc::new(picture_png());
    let wake = Block::Text(format!(
        "Wake-up 1 (start) at t = 0.0 s.\n{}",
        json!({"reason": "start", "instruction": "Scout F53 and come home."})
    ));
    let result = Block::ToolResult {
        call_id: "call_s1".into(),
        content: json!({"x": 1.5, "y": -20.25, "heading_deg": 90.0, "speed_mps": 3.9, "skill": "goto"})
            .to_string(),
        is_error: false,
    };
    let cfg = Arc::new(cfg);
    let mut report = |_| {};
    let t0 = Instant::now();
    for _ in 0..SESSIONS {
        let mut s = ChatSession::new(cfg.clone(), new_wire(), None, None, &tools);
        for i in 0..CALLS {
            let blocks = if i == 0 {
                vec![wake.clone(), Block::Image { frame: "f0001".into(), png: png.clone() }]
            } else {
                vec![result.clone()]
            };
            s.send(&blocks, &mut CallCtx { limit_s: 30.0, report: &mut report }).expect("the stub answers");
        }
    }
    let round_trip_ms = t0.elapsed().as_secs_f64() * 1e3 / (SESSIONS * CALLS) as f64;
    // The client's own work on the same histories, without the network: the body it builds,
    // the reply it reads, the history it keeps, per call.
    let reply = json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "read", "arguments": "{\"what\":\"vehicle\"}"}}]}}],
        "content": [{"type": "tool_use", "id": "c", "name": "read", "input": {"what": "vehicle"}}], "stop_reason": "tool_use",
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "input_tokens": 10, "output_tokens": 5}});
    let reply_bytes = serde_json::to_vec(&reply).unwrap();
    let t0 = Instant::now();
    for _ in 0..SESSIONS {
        let mut w = new_wire();
        w.push(
            vec![Block::Text("Wake-up 1".into()), Block::Image { frame: "f0001".into(), png: png.clone() }],
            &cfg.capabilities,
        );
        for _ in 0..CALLS {
            std::hint::black_box(w.body(&cfg));
            let v: serde_json::Value = serde_json::from_slice(&reply_bytes).unwrap();
            let p = w.parse(&v).unwrap();
            w.push_assistant(p.assistant);
            w.push(
                vec![Block::ToolResult { call_id: "c".into(), content: "{\"x\":1}".into(), is_error: false }],
                &cfg.capabilities,
            );
        }
    }
    let own_ms = t0.elapsed().as_secs_f64() * 1e3 / (SESSIONS * CALLS) as f64;
    println!(
        "overhead {name}: {CALLS}-call sessions with a picture: round trip {round_trip_ms:.3} ms per call on loopback (client + stub server); client's own work {own_ms:.3} ms per call ({:.0}% of the 1 ms target)",
        own_ms * 100.0
    );
}

/// A 640 × 692 PNG like a map picture (a pattern, so it does not compress to nothing).
fn picture_png() -> Vec<u8> {
    let (w, h) = (640u32, 692u32);
    let data: Vec<u8> = (0..w * h * 3).map(|i| ((i * 7919) % 251) as u8).collect();
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.write_header().unwrap().write_image_data(&data).unwrap();
    out
}

fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

fn concurrent_scaling(root: &Path) {
    let exe = env!("CARGO_BIN_EXE_acres-harness");
    let dir = std::env::temp_dir().join(format!("acres-bench-models-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scenarios/maps")).unwrap();
    std::fs::copy(root.join("scenarios/maps/default.json"), dir.join("scenarios/maps/default.json")).unwrap();
    let base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("scenarios/t1_01_one_field.json")).unwrap())
            .unwrap();
    let runs = 256;
    for i in 0..runs {
        let mut v = base.clone();
        v["id"] = json!(format!("bench_{i:03}"));
        v["instruction"] = json!(format!("Scout F53 and come home (copy {i})."));
        std::fs::write(dir.join(format!("scenarios/bench_{i:03}.json")), v.to_string()).unwrap();
    }
    let calls = 5;
    let mut turns: Vec<serde_json::Value> = (0..calls - 1)
        .map(|_| json!({"tool_calls": [{"name": "read", "arguments": {"what": "vehicle"}}]}))
        .collect();
    turns.push(json!({"content": "Nothing to do."}));
    let script = json!({"then": "done", "delay_s": 1.0, "turns": turns});
    let _ = serde_json::from_value::<Script>(script.clone()).expect("a valid script");
    std::fs::write(dir.join("script.json"), script.to_string()).unwrap();
    let mut stub = Command::new(exe)
        .args(["stub-server", "--script"])
        .arg(dir.join("script.json"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(stub.stdout.take().unwrap()).read_line(&mut url).unwrap();
    let mf = dir.join("m.toml");
    std::fs::write(
        &mf,
        format!("provider = \"openai\"\nmodel = \"stub-model\"\nbase_url = \"{}/v1\"\n", url.trim()),
    )
    .unwrap();
    let t0 = Instant::now();
    let mut child = Command::new(exe)
        .args(["run", "--scenario"])
        .arg(dir.join("scenarios"))
        .arg("--model")
        .arg(&mf)
        .args(["--mode", "text", "--concurrent", "256", "--quiet", "--out"])
        .arg(dir.join("runs"))
        .current_dir(root)
        .spawn()
        .unwrap();
    let mut peak_kb = 0;
    while child.try_wait().unwrap().is_none() {
        peak_kb = peak_kb.max(vm_hwm_kb(child.id()).unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let wall = t0.elapsed().as_secs_f64();
    let _ = stub.kill();
    let _ = stub.wait();
    let finished = std::fs::read_dir(dir.join("runs")).map_or(0, |d| d.count());
    let per_min = finished as f64 * 60.0 / wall;
    let ideal = runs as f64 * 60.0 / calls as f64;
    println!(
        "concurrent: {finished} runs of {calls} calls at 1 s each in {wall:.2} s with --concurrent 256: {per_min:.0} runs/min, ideal {ideal:.0} ({:.0}% of ideal); peak memory {:.1} MB",
        per_min / ideal * 100.0,
        peak_kb as f64 / 1024.0
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let stub =
        acres_harness::planners::models::stub::start(Script::default(), None, 0).expect("the stub listens");
    let tools = acres_harness::tools::tools_for(
        Mode::Visual,
        acres_harness::runfolder::rows::Profile::Vehicle,
        false,
    );
    let sys = "You plan the missions of an agricultural vehicle.";
    overhead("openai", config("openai", &stub.url()), || OpenAiWire::new("stub-model", sys, &tools));
    overhead("anthropic", config("anthropic", &stub.url()), || AnthropicWire::new("stub-model", sys, &tools));
    drop(stub);
    concurrent_scaling(&root);
}
