//! Replay: the recorded replies and latencies of a run folder, in order, with no model call.
//! A run replayed with the same scenario, mode and seed drives the world through the same
//! commands at the same mission times, so its world digest equals the recorded one.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::{Block, CallCtx, CallEvent, Client, ModelError, Reply, Session};
use crate::planners::interface::{ToolDef, Usage};

/// One recorded call: a reply, or an error with its latency, and the tries and waits it had.
#[derive(Debug, Clone)]
pub enum Recorded {
    /// A reply.
    Reply {
        /// The reply.
        reply: Reply,
        /// Its recorded cost, USD.
        usd: f64,
        /// Its new tries and waits, replayed as rows (no time passes).
        events: Vec<CallEvent>,
    },
    /// A call without a reply.
    Error {
        /// The failure.
        error: ModelError,
        /// Its new tries and waits.
        events: Vec<CallEvent>,
    },
}

/// A client whose one session plays the recording back.
#[derive(Debug, Clone)]
pub struct ReplayClient {
    name: String,
    calls: Arc<Mutex<VecDeque<Recorded>>>,
    budget_at_end: bool,
}

impl ReplayClient {
    /// A client for the recorded calls of a run made with the model `name`.
    pub fn new(name: &str, calls: Vec<Recorded>) -> Self {
        Self { name: name.into(), calls: Arc::new(Mutex::new(calls.into())), budget_at_end: false }
    }
    /// The recorded run ended `budget`: once the recording is played, the next call is
    /// estimated above every cap, so the replay ends where the run did.
    pub fn budget_at_end(mut self, yes: bool) -> Self {
        self.budget_at_end = yes;
        self
    }
    /// Calls not yet played.
    pub fn remaining(&self) -> usize {
        self.calls.lock().map_or(0, |c| c.len())
    }
}

impl Client for ReplayClient {
    fn name(&self) -> &str {
        &self.name
    }
    fn start(&self, _system: &str, _tools: &[ToolDef]) -> Result<Box<dyn Session>, ModelError> {
        Ok(Box::new(ReplaySession {
            calls: self.calls.clone(),
            budget_at_end: self.budget_at_end,
            last_usd: 0.0,
        }))
    }
}

struct ReplaySession {
    calls: Arc<Mutex<VecDeque<Recorded>>>,
    budget_at_end: bool,
    /// The recorded cost of the reply just played (asked right after it).
    last_usd: f64,
}

impl Session for ReplaySession {
    fn send(&mut self, _blocks: &[Block], ctx: &mut CallCtx) -> Result<Reply, ModelError> {
        let next = self.calls.lock().ok().and_then(|mut c| c.pop_front());
        match next {
            Some(Recorded::Reply { reply, usd, events }) => {
                self.last_usd = usd;
                for e in events {
                    (ctx.report)(e);
                }
                Ok(reply)
            }
            Some(Recorded::Error { error, events }) => {
                for e in events {
                    (ctx.report)(e);
                }
                Err(error)
            }
            None => Ok(Reply::text("(the recording has no more calls)", 0.0)),
        }
    }

    fn usd(&self, _usage: &Usage) -> f64 {
        self.last_usd
    }

    fn estimate(&self, _blocks: &[Block]) -> Usage {
        let played = self.calls.lock().map_or(true, |c| c.is_empty());
        let over = if self.budget_at_end && played { u64::MAX / 4 } else { 0 };
        Usage { input_tokens: over, ..Usage::default() }
    }
}
