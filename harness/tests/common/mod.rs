//! Shared by the loop tests: a programmable planner (a test session that answers from a
//! closure) and a runner that loads a scenario from JSON, runs it and reads its rows back.

#![allow(dead_code)]

pub mod stub;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use acres_harness::planners::planning::costs::CostTable;
use acres_harness::planners::{Block, CallCtx, Client, ModelError, Reply, Session};
use acres_harness::run::{run_scenario, Planner, RunOptions, RunOutcome};
use acres_harness::runfolder::rows::{Mode, Profile, Row, Stop, ToolCall, ToolDef, Usage};
use acres_harness::scenario;

pub use crate::support::root;

pub type Brain = Box<dyn FnMut(usize, &[Block]) -> Result<Reply, ModelError> + Send>;

/// A client whose session answers with a closure of (call number, blocks).
pub struct FnClient {
    pub brain: Arc<Mutex<Option<Brain>>>,
}

pub struct FnSession {
    brain: Brain,
    calls: usize,
    last: Usage,
}

impl Session for FnSession {
    fn send(&mut self, blocks: &[Block], _ctx: &mut CallCtx) -> Result<Reply, ModelError> {
        self.calls += 1;
        let r = (self.brain)(self.calls, blocks);
        if let Ok(reply) = &r {
            self.last = reply.usage;
        }
        r
    }
    fn usd(&self, usage: &Usage) -> f64 {
        usage.output_tokens as f64 * 1e-3
    }
    /// The test sessions estimate the next call as the last one.
    fn estimate(&self, _blocks: &[Block]) -> Usage {
        self.last
    }
}

impl Client for FnClient {
    fn name(&self) -> &str {
        "test"
    }
    fn start(&self, _system: &str, _tools: &[ToolDef]) -> Result<Box<dyn Session>, ModelError> {
        let brain = self.brain.lock().unwrap().take().expect("one session per client");
        Ok(Box::new(FnSession { brain, calls: 0, last: Usage::default() }))
    }
}

pub fn reply(calls: Vec<(&str, Value)>, latency_s: f64) -> Reply {
    let tool_calls: Vec<ToolCall> = calls
        .into_iter()
        .enumerate()
        .map(|(i, (n, a))| ToolCall { id: format!("c{i}"), name: n.into(), arguments: a })
        .collect();
    let stop = if tool_calls.is_empty() { Stop::End } else { Stop::ToolUse };
    Reply { tool_calls, stop, ..Reply::text(if stop == Stop::End { "ok" } else { "" }, latency_s) }
}

pub fn end_turn() -> Reply {
    reply(vec![], 1.0)
}

pub fn wake_reason(blocks: &[Block]) -> Option<String> {
    blocks.iter().find_map(|b| match b {
        Block::Text(t) if t.starts_with("Wake-up") => {
            let open = t.find('(')?;
            let close = t.find(')')?;
            Some(t[open + 1..close].to_string())
        }
        _ => None,
    })
}

pub fn results(blocks: &[Block]) -> Vec<Value> {
    blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { content, .. } => serde_json::from_str(content).ok(),
            _ => None,
        })
        .collect()
}

pub struct Run {
    pub outcome: RunOutcome,
    pub rows: Vec<Row>,
}

impl Run {
    pub fn end(&self) -> &acres_harness::runfolder::rows::EndRow {
        match self.rows.last() {
            Some(Row::End(e)) => e,
            other => panic!("last row is not end: {other:?}"),
        }
    }
    pub fn wakes(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter_map(|r| match r {
                Row::Wake(w) => Some(w.reason.as_str().to_string()),
                _ => None,
            })
            .collect()
    }
    pub fn tools(&self) -> Vec<(String, Value, bool)> {
        self.rows
            .iter()
            .filter_map(|r| match r {
                Row::Tool(t) => Some((t.name.clone(), Value::Object(t.result.clone()), t.error)),
                _ => None,
            })
            .collect()
    }
}

pub fn scenario_text(extra: Value) -> String {
    let mut base = json!({
        "schema": "acres-harness-scenario-1", "id": "loop_test", "tier": 1, "title": "Loop test",
        "instruction": "Scout F51 and come home.", "fields": ["F51"],
        "success": {"scouted": ["F51"], "home": true}
    });
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base.to_string()
}

pub fn run_with(name: &str, extra: Value, mode: Mode, profile: Profile, brain: Brain) -> Run {
    let sc =
        scenario::parse(&scenario_text(extra), Path::new("loop_test.json"), &root().join("scenarios/maps"))
            .unwrap();
    let table = CostTable::load(&root().join("scenarios/costs"), "default", sc.condition.as_str()).unwrap();
    let out = std::env::temp_dir().join(format!("acres-loop-{}-{name}", std::process::id()));
    let opts = RunOptions {
        mode,
        profile,
        pace: 0.0,
        operator: true,
        out: out.clone(),
        seed: 1,
        recovery_mode: None,
        recovery_options: Vec::new(),
        model: "test".into(),
        ..RunOptions::new(out.clone())
    };
    let client = FnClient { brain: Arc::new(Mutex::new(Some(brain))) };
    let outcome = run_scenario(&sc, &opts, Planner::Model(&client), table).unwrap();
    let text = std::fs::read_to_string(outcome.folder.join("run.jsonl")).unwrap();
    let rows = text.lines().map(|l| Row::decode(l).unwrap()).collect();
    let report = acres_harness::runfolder::validate_folder(&outcome.folder);
    assert!(report.is_ok(), "{name}: {report}");
    let _ = std::fs::remove_dir_all(&out);
    Run { outcome, rows }
}

/// A planner that drives F51 and home, dispatching on each skill end.
pub fn driver() -> Brain {
    let mut step = 0;
    Box::new(move |_, blocks| {
        let Some(reason) = wake_reason(blocks) else { return Ok(end_turn()) };
        if reason != "start" && reason != "skill_ended" {
            return Ok(end_turn());
        }
        step += 1;
        Ok(match step {
            1 => reply(vec![("dispatch", json!({"skill": "goto", "arguments": {"field": "F51"}}))], 1.0),
            2 => reply(vec![("dispatch", json!({"skill": "scout", "arguments": {"field": "F51"}}))], 1.0),
            3 => reply(vec![("dispatch", json!({"skill": "return_home"}))], 1.0),
            _ => end_turn(),
        })
    })
}
