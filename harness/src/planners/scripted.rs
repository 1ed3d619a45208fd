//! The scripted planner: the stand-in planner with no network. It is a rule set, not a script of
//! one scenario: it reads the field names and an order from the instruction, plans through the
//! plan tool (checked mode) or checks the budget (text and visual modes) and drops fields the
//! deadline or the fuel limit refuse, dispatches, stops and waits around returns on its route and
//! resumes when they are gone, skips a field that stays blocked, follows operator requests to
//! come home, and comes home. Each call takes `think_s` seconds of mission time, so the charging
//! of thinking time is exercised.
//! A scenario with a learned skill that takes a field (`edge_pass`) has it scout the fields
//! instead of `scout`.
//!
//! It speaks only through the session interface: wake messages (their JSON line) and tool
//! results (JSON objects) in, tool calls out — as a language model would.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{Block, CallCtx, Client, ModelError, Reply, Session};
use crate::planners::interface::{Stop, ToolCall, ToolDef};
use crate::planners::wake::parse_detail;

/// Seconds to wait before looking again at returns on the route.
pub const WAIT_S: f64 = 20.0;
use crate::planners::planning::GIVE_UP_S;

/// The scripted model configuration.
#[derive(Debug, Clone)]
pub struct ScriptedClient {
    /// Mission seconds each call takes.
    pub think_s: f64,
    /// The configuration's name (`scripted`).
    pub name: String,
}

impl ScriptedClient {
    /// The `scripted` configuration with a think time.
    pub fn new(think_s: f64) -> Self {
        ScriptedClient { think_s, name: "scripted".into() }
    }
}

impl Client for ScriptedClient {
    fn name(&self) -> &str {
        &self.name
    }
    fn start(&self, _system: &str, tools: &[ToolDef]) -> Result<Box<dyn Session>, ModelError> {
        Ok(Box::new(ScriptedSession::new(self.think_s, tools)))
    }
}

#[cfg(test)]
#[path = "scripted_tests.rs"]
mod tests;

#[derive(Debug, Clone, PartialEq, Default)]
enum Phase {
    #[default]
    Idle,
    Going(String),
    Scouting(String),
    Returning,
    Waiting(Box<Phase>),
    Home,
}

#[derive(Debug, Clone, PartialEq, Default)]
enum Cont {
    #[default]
    None,
    Start,
    Plan(u32),
    Budget,
    CheckClear,
    Dispatch,
}

enum Act {
    Calls(Vec<(&'static str, Value)>),
    /// One call of a tool named at run time (a learned skill's).
    Call(String, Value),
    End(String),
}

/// A scripted session.
#[derive(Debug, Default)]
pub struct ScriptedSession {
    think_s: f64,
    has_plan: bool,
    calls: u64,
    pending: Vec<String>,
    cont: Cont,
    order: Vec<String>,
    ordered: bool,
    costs: BTreeMap<String, (f64, f64)>,
    plan: Vec<String>,
    phase: Phase,
    home_after: bool,
    waited_s: f64,
    /// A learned skill that scouts a field (its tool requires `field`): used instead of `scout`.
    learned_scout: Option<String>,
    /// It dispatched a `stop` whose `stopped` end has not come yet: that end is its own.
    asked_stop: bool,
}

impl ScriptedSession {
    /// A session that thinks `think_s` mission seconds per call, with these tools.
    pub fn new(think_s: f64, tools: &[ToolDef]) -> Self {
        const BUILT_IN: [&str; 6] = ["look", "read", "plan", "dispatch", "note", "ask_operator"];
        let learned_scout = tools
            .iter()
            .find(|t| {
                !BUILT_IN.contains(&t.name.as_str())
                    && t.input_schema["required"].as_array().is_some_and(|r| r.contains(&json!("field")))
            })
            .map(|t| t.name.clone());
        ScriptedSession {
            think_s,
            has_plan: tools.iter().any(|t| t.name == "plan"),
            learned_scout,
            ..Default::default()
        }
    }
}

impl Session for ScriptedSession {
    fn send(&mut self, blocks: &[Block], _ctx: &mut CallCtx) -> Result<Reply, ModelError> {
        let mut wake: Option<Value> = None;
        let mut results: Vec<Value> = Vec::new();
        for b in blocks {
            match b {
                Block::Text(t) if t.starts_with("Wake-up") => wake = parse_detail(t),
                Block::ToolResult { content, .. } => {
                    results
                        .push(serde_json::from_str(content).unwrap_or(json!({"error": "unreadable result"})));
                }
                _ => {}
            }
        }
        let act = match wake {
            Some(d) => self.on_wake(&d),
            None if !results.is_empty() => self.on_results(&results),
            None => Act::End("Nothing to do.".into()),
        };
        Ok(self.reply(act))
    }
}

/// True when the instruction orders fields: "first", "order", "last", or "then" followed by a
/// field name ("then F51", not "then come home").
fn says_an_order(text: &str) -> bool {
    let words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let is_field = |w: &str| w.len() == 3 && w.starts_with('f') && w[1..].chars().all(|c| c.is_ascii_digit());
    words.iter().any(|w| w == "first" || w == "order" || w == "last")
        || words.windows(2).any(|p| p[0] == "then" && is_field(&p[1]))
}

fn field_of(v: &Value) -> Option<String> {
    v.as_str().filter(|s| s.starts_with('F')).map(String::from)
}

impl ScriptedSession {
    fn reply(&mut self, act: Act) -> Reply {
        let (text, tool_calls, stop) = match act {
            Act::End(t) => {
                self.cont = Cont::None;
                (t, Vec::new(), Stop::End)
            }
            Act::Call(name, arguments) => {
                self.pending.clear();
                self.calls += 1;
                let id = format!("call_{}", self.calls);
                self.pending.push(id.clone());
                (String::new(), vec![ToolCall { id, name, arguments }], Stop::ToolUse)
            }
            Act::Calls(calls) => {
                self.pending.clear();
                let tc: Vec<ToolCall> = calls
                    .into_iter()
                    .map(|(name, arguments)| {
                        self.calls += 1;
                        let id = format!("call_{}", self.calls);
                        self.pending.push(id.clone());
                        ToolCall { id, name: name.into(), arguments }
                    })
                    .collect();
                (String::new(), tc, Stop::ToolUse)
            }
        };
        Reply { tool_calls, stop, ..Reply::text(text, self.think_s) }
    }

    fn on_wake(&mut self, d: &Value) -> Act {
        match d["reason"].as_str().unwrap_or_default() {
            "start" => {
                self.read_instruction(d);
                self.cont = Cont::Start;
                Act::Calls(vec![("read", json!({"what": "fields"}))])
            }
            "skill_ended" => self.on_skill_ended(d),
            "returns_on_route" | "stuck" => {
                let on_route =
                    d["on_route"].as_array().is_some_and(|a| !a.is_empty()) || d["reason"] == "stuck";
                self.hold_on(on_route)
            }
            "object_seen" => self.hold_on(d["on_route"] == true),
            "request" => {
                let text = d["text"].as_str().unwrap_or_default().to_lowercase();
                if !text.contains("home") {
                    return Act::End("Noted.".into());
                }
                if text.contains("now") || text.contains("immediately") {
                    self.phase = Phase::Returning;
                    self.cont = Cont::Dispatch;
                    self.asked_stop = true;
                    return Act::Calls(vec![
                        ("dispatch", json!({"skill": "stop"})),
                        ("dispatch", json!({"skill": "return_home"})),
                    ]);
                }
                self.home_after = true;
                match &self.phase {
                    Phase::Idle => self.next_step(),
                    Phase::Going(f) | Phase::Scouting(f) => Act::End(format!("I will come home after {f}.")),
                    _ => Act::End("I will come home.".into()),
                }
            }
            "timer" => self.check_clear(),
            "model_error" => match self.phase {
                Phase::Idle => self.next_step(),
                _ => Act::End("Continuing.".into()),
            },
            _ => Act::End("Noted.".into()),
        }
    }

    fn read_instruction(&mut self, d: &Value) {
        let text = d["instruction"].as_str().unwrap_or_default();
        let fields: Vec<String> =
            d["fields"].as_array().map(|a| a.iter().filter_map(field_of).collect()).unwrap_or_default();
        let mut named: Vec<String> = Vec::new();
        for w in text.split(|c: char| !c.is_ascii_alphanumeric()) {
            if w.len() == 3
                && w.starts_with('F')
                && w[1..].chars().all(|c| c.is_ascii_digit())
                && !named.iter().any(|n| n == w)
            {
                named.push(w.to_string());
            }
        }
        self.ordered = named.len() > 1 && says_an_order(text);
        let mut order: Vec<String> = if self.ordered {
            named.into_iter().filter(|f| fields.contains(f)).collect()
        } else {
            Vec::new()
        };
        for f in fields {
            if !order.contains(&f) {
                order.push(f);
            }
        }
        self.order = order;
    }

    fn on_skill_ended(&mut self, d: &Value) -> Act {
        let code = d["code"].as_str().unwrap_or_default();
        let skill = d["skill"].as_str().unwrap_or_default();
        match code {
            "succeeded" => match (skill, self.phase.clone()) {
                ("goto", Phase::Going(f)) => {
                    self.phase = Phase::Scouting(f.clone());
                    self.cont = Cont::Dispatch;
                    match &self.learned_scout {
                        Some(name) => Act::Call(name.clone(), json!({"field": f})),
                        None => Act::Calls(vec![(
                            "dispatch",
                            json!({"skill": "scout", "arguments": {"field": f}}),
                        )]),
                    }
                }
                ("scout" | "learned", Phase::Scouting(f)) => {
                    self.order.retain(|g| *g != f);
                    self.waited_s = 0.0;
                    self.phase = Phase::Idle;
                    self.next_step()
                }
                ("return_home", _) | ("goto", Phase::Returning) => {
                    self.phase = Phase::Home;
                    Act::End("Home. The mission is complete.".into())
                }
                ("wait", Phase::Waiting(_)) => self.check_clear(),
                _ => Act::End("Noted.".into()),
            },
            "stopped" if std::mem::take(&mut self.asked_stop) => {
                Act::End("Stopped; waiting for the way to clear.".into())
            }
            // A stop it did not ask for (the vehicle's fail-safe, an operator at the vehicle):
            // go on where the motion stopped, or look again when it was waiting.
            "stopped" => match self.phase {
                Phase::Going(_) | Phase::Scouting(_) | Phase::Returning => {
                    self.cont = Cont::Dispatch;
                    Act::Calls(vec![("dispatch", json!({"skill": "resume"}))])
                }
                Phase::Waiting(_) => self.check_clear(),
                Phase::Idle | Phase::Home => Act::End("Noted; nothing was moving.".into()),
            },
            "blocked" => {
                if !matches!(self.phase, Phase::Waiting(_)) {
                    self.phase = Phase::Waiting(Box::new(self.phase.clone()));
                }
                self.waited_s += WAIT_S;
                self.cont = Cont::Dispatch;
                Act::Calls(vec![("dispatch", json!({"skill": "wait", "arguments": {"seconds": WAIT_S}}))])
            }
            _ => self.skip_current(),
        }
    }

    /// Returns on the route: stop and wait.
    fn hold_on(&mut self, on_route: bool) -> Act {
        let moving = matches!(self.phase, Phase::Going(_) | Phase::Scouting(_) | Phase::Returning);
        if !on_route || !moving {
            return Act::End("Noted; nothing on my route to act on.".into());
        }
        self.phase = Phase::Waiting(Box::new(self.phase.clone()));
        self.cont = Cont::Dispatch;
        self.asked_stop = true;
        Act::Calls(vec![
            ("dispatch", json!({"skill": "stop"})),
            ("dispatch", json!({"skill": "wait", "arguments": {"seconds": WAIT_S}})),
        ])
    }

    fn check_clear(&mut self) -> Act {
        self.cont = Cont::CheckClear;
        Act::Calls(vec![("read", json!({"what": "mission"}))])
    }

    fn skip_current(&mut self) -> Act {
        let inner = match &self.phase {
            Phase::Waiting(p) => (**p).clone(),
            p => p.clone(),
        };
        match inner {
            Phase::Going(f) | Phase::Scouting(f) => {
                self.order.retain(|g| *g != f);
                self.phase = Phase::Idle;
                self.waited_s = 0.0;
                self.next_step()
            }
            Phase::Returning => {
                self.phase = Phase::Returning;
                self.cont = Cont::Dispatch;
                Act::Calls(vec![("dispatch", json!({"skill": "return_home"}))])
            }
            _ => {
                self.phase = Phase::Idle;
                self.next_step()
            }
        }
    }

    fn next_step(&mut self) -> Act {
        if self.home_after || self.order.is_empty() {
            self.phase = Phase::Returning;
            self.cont = Cont::Dispatch;
            return Act::Calls(vec![("dispatch", json!({"skill": "return_home"}))]);
        }
        if self.has_plan {
            let planned_next = self.plan.first();
            if planned_next == self.order.first() && self.plan == self.order {
                return self.goto_first();
            }
            self.cont = Cont::Plan(0);
            return Act::Calls(vec![("plan", json!({"visits": self.order, "return_home": true}))]);
        }
        self.cont = Cont::Budget;
        Act::Calls(vec![("read", json!({"what": "budget"})), ("read", json!({"what": "fields"}))])
    }

    fn goto_first(&mut self) -> Act {
        let f = self.order[0].clone();
        self.phase = Phase::Going(f.clone());
        self.cont = Cont::Dispatch;
        Act::Calls(vec![("dispatch", json!({"skill": "goto", "arguments": {"field": f}}))])
    }

    fn on_results(&mut self, results: &[Value]) -> Act {
        let first = results.first().cloned().unwrap_or(json!({}));
        match std::mem::take(&mut self.cont) {
            Cont::Start => {
                self.take_costs(&first);
                if !self.ordered {
                    // Nearest first: the planned time of each field from home.
                    let costs = self.costs.clone();
                    self.order.sort_by(|a, b| {
                        let ca = costs.get(a).map_or(f64::MAX, |c| c.0);
                        let cb = costs.get(b).map_or(f64::MAX, |c| c.0);
                        ca.total_cmp(&cb).then(a.cmp(b))
                    });
                }
                self.next_step()
            }
            Cont::Plan(attempt) => self.on_plan(&first, attempt),
            Cont::Budget => self.on_budget(&first, &results.get(1).cloned().unwrap_or(json!({}))),
            Cont::CheckClear => self.on_check_clear(&first),
            Cont::Dispatch => self.on_dispatch(&results.last().cloned().unwrap_or(json!({}))),
            Cont::None => Act::End("Done.".into()),
        }
    }

    /// The plan's verdict: accepted, go; refused, drop the field the reason points at and plan
    /// again (at most 10 times).
    fn on_plan(&mut self, v: &Value, attempt: u32) -> Act {
        if v["accepted"] == true {
            self.plan = self.order.clone();
            return self.goto_first();
        }
        if attempt > 10 {
            return Act::End("No plan is accepted; I stop here.".into());
        }
        let reason = v["reason"].as_str().unwrap_or_default();
        let drop = match reason {
            "deadline" | "fuel" => {
                let k = usize::from(reason == "fuel");
                self.order
                    .iter()
                    .max_by(|a, b| {
                        let ca = self.costs.get(*a).map_or(0.0, |c| if k == 0 { c.0 } else { c.1 });
                        let cb = self.costs.get(*b).map_or(0.0, |c| if k == 0 { c.0 } else { c.1 });
                        ca.total_cmp(&cb)
                    })
                    .cloned()
            }
            _ => v["field"].as_str().map(String::from).or_else(|| self.order.last().cloned()),
        };
        if let Some(f) = drop {
            self.order.retain(|g| *g != f);
        }
        if self.order.is_empty() {
            return self.next_step();
        }
        self.cont = Cont::Plan(attempt + 1);
        Act::Calls(vec![("plan", json!({"visits": self.order, "return_home": true}))])
    }

    /// The budget and the fields' costs from here (unchecked mode): the first field that still
    /// fits the deadline and the fuel.
    fn on_budget(&mut self, budget: &Value, fields: &Value) -> Act {
        let t = budget["t_s"].as_f64().unwrap_or(0.0);
        let deadline = budget["deadline_s"].as_f64();
        let fuel = budget["fuel_limit_mj"].as_f64();
        let used = budget["energy_used_mj"].as_f64().unwrap_or(0.0);
        let here: BTreeMap<String, (f64, f64)> = fields["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| {
                let c = &f["from_here"];
                Some((
                    f["id"].as_str()?.to_string(),
                    (c["planned_time_s"].as_f64()?, c["planned_energy_mj"].as_f64()?),
                ))
            })
            .collect();
        while let Some(f) = self.order.first().cloned() {
            let (time, energy) = here.get(&f).copied().unwrap_or((0.0, 0.0));
            let fits = deadline.is_none_or(|d| t + time <= d) && fuel.is_none_or(|l| used + energy <= l);
            if fits {
                return self.goto_first();
            }
            self.order.remove(0);
        }
        self.next_step()
    }

    /// Whether the route is clear: go on (or resume), else wait, and give up past `GIVE_UP_S`.
    fn on_check_clear(&mut self, m: &Value) -> Act {
        let blocked = m["returns_on_route"].as_array().is_some_and(|a| !a.is_empty());
        if !blocked {
            self.waited_s = 0.0;
            if let Phase::Waiting(p) = self.phase.clone() {
                self.phase = *p;
            }
            if m["interrupted"].is_null() {
                return match self.phase.clone() {
                    Phase::Going(_) | Phase::Scouting(_) | Phase::Returning => Act::End("Continuing.".into()),
                    _ => self.next_step(),
                };
            }
            self.cont = Cont::Dispatch;
            return Act::Calls(vec![("dispatch", json!({"skill": "resume"}))]);
        }
        self.waited_s += WAIT_S;
        let returning = matches!(&self.phase, Phase::Waiting(p) if **p == Phase::Returning);
        if self.waited_s >= GIVE_UP_S && !returning {
            return self.skip_current();
        }
        self.cont = Cont::Dispatch;
        Act::Calls(vec![("dispatch", json!({"skill": "wait", "arguments": {"seconds": WAIT_S}}))])
    }

    /// A dispatch's reply: accepted, end the turn; refused by the plan rule, plan again; else
    /// skip the field.
    fn on_dispatch(&mut self, last: &Value) -> Act {
        if last["accepted"] == true {
            return Act::End(match &self.phase {
                Phase::Going(f) => format!("Driving to {f}."),
                Phase::Scouting(f) => format!("Scouting {f}."),
                Phase::Returning => "Returning home.".into(),
                Phase::Waiting(_) => "Waiting for the way to clear.".into(),
                _ => "Done.".into(),
            });
        }
        if last["rule"] == "plan" {
            // The plan checker rule: plan again.
            self.plan.clear();
            self.phase = Phase::Idle;
            return self.next_step();
        }
        let why = last["error"].as_str().or(last["cause"].as_str()).unwrap_or_default();
        if why.contains("busy") {
            return Act::End(format!("The skill server is busy: {why}"));
        }
        self.skip_current()
    }

    fn take_costs(&mut self, fields: &Value) {
        for f in fields["fields"].as_array().into_iter().flatten() {
            if let (Some(id), Some(t), Some(e)) = (
                f["id"].as_str(),
                f["from_here"]["planned_time_s"].as_f64(),
                f["from_here"]["planned_energy_mj"].as_f64(),
            ) {
                self.costs.insert(id.to_string(), (t, e));
            }
        }
    }
}
