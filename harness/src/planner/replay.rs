//! Replay: the recorded replies and latencies of a run folder, in order, with no model call.
//! A run replayed with the same scenario, mode and seed drives the world through the same
//! commands at the same mission times, so its world digest equals the recorded one.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::{Block, Client, ModelError, Reply, Session};
use crate::runlog::rows::{ToolDef, Usage};

/// One recorded call: a reply, or an error with its latency.
#[derive(Debug, Clone)]
pub enum Recorded {
    /// A reply.
    Reply(Reply),
    /// A call without a reply.
    Error(ModelError),
}

/// A client whose one session plays the recording back.
#[derive(Debug, Clone)]
pub struct ReplayClient {
    name: String,
    calls: Arc<Mutex<VecDeque<Recorded>>>,
}

impl ReplayClient {
    /// A client for the recorded calls of a run made with the model `name`.
    pub fn new(name: &str, calls: Vec<Recorded>) -> Self {
        Self { name: name.into(), calls: Arc::new(Mutex::new(calls.into())) }
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
    fn start(&self, _system: &str, _tools: &[ToolDef]) -> Box<dyn Session> {
        Box::new(ReplaySession { calls: self.calls.clone() })
    }
}

struct ReplaySession {
    calls: Arc<Mutex<VecDeque<Recorded>>>,
}

impl Session for ReplaySession {
    fn send(&mut self, _blocks: &[Block]) -> Result<Reply, ModelError> {
        let next = self.calls.lock().ok().and_then(|mut c| c.pop_front());
        match next {
            Some(Recorded::Reply(r)) => Ok(r),
            Some(Recorded::Error(e)) => Err(e),
            None => Ok(Reply {
                text: "(the recording has no more calls)".into(),
                reasoning: None,
                tool_calls: Vec::new(),
                stop: crate::runlog::rows::Stop::End,
                usage: Usage::default(),
                latency_s: 0.0,
            }),
        }
    }
}
