//! Waiting for ROS data instead of polling for it: a [`Waiter`] blocks its thread until a
//! subscription it watches has a new sample, another thread calls [`Wake::wake`], or a timeout
//! passes, whichever comes first.
//!
//! RustDDS signals each sample a reader receives on a socket pair of that reader; the waiter
//! registers those with one `mio` poll (edge-triggered: a sample that arrives between the
//! loop's last [`Sub::take`] and its next [`Waiter::wait`] still ends that wait at once, so
//! nothing is missed). [`Sub::take`] clears the signal. A loop that polled with a sleep of
//! `s` between looks saw a sample on average `s / 2` late, and up to `s`; a waiting one sees it
//! as soon as its thread runs.

use std::sync::Arc;
use std::time::Duration;

use ros2_client::dds::rustdds::mio1::{Events, Interest, Poll, Token, Waker};

use crate::node::{NodeError, Sub};
use acres_msgs::Message;

/// How often a waiting loop still looks at what it cannot wait on: ros2-client's action client
/// and server offer no source to register, so their replies, goals and cancels are polled at
/// least this often (and whenever a sample wakes the loop).
pub const ACTION_POLL: Duration = Duration::from_micros(500);

/// The token of the waiter's own [`Waker`].
const WAKE_TOKEN: Token = Token(0);

/// Blocks a thread until a watched subscription has data, a [`Wake`] is called, or a timeout.
pub struct Waiter {
    poll: Poll,
    events: Events,
    waker: Arc<Waker>,
    next_token: usize,
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiter").field("watched", &(self.next_token - 1)).finish()
    }
}

/// A handle another thread uses to end the [`Waiter`]'s wait (cheap to clone).
#[derive(Clone)]
pub struct Wake(Arc<Waker>);

impl std::fmt::Debug for Wake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Wake")
    }
}

impl Wake {
    /// Ends the waiter's current wait, or its next one if it is not waiting.
    pub fn wake(&self) {
        // A failed wake leaves the waiter to its timeout: later, never lost.
        let _ = self.0.wake();
    }
}

impl Waiter {
    /// A waiter that watches nothing yet.
    pub fn new() -> Result<Waiter, NodeError> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKE_TOKEN)?);
        Ok(Waiter { poll, events: Events::with_capacity(16), waker, next_token: 1 })
    }

    /// Watches `sub`: a new sample on it ends the wait.
    pub fn watch<M: Message + 'static>(&mut self, sub: &mut Sub<M>) -> Result<(), NodeError> {
        let token = Token(self.next_token);
        self.next_token += 1;
        Ok(self.poll.registry().register(&mut sub.0, token, Interest::READABLE)?)
    }

    /// A handle that ends the wait from another thread.
    pub fn wake_handle(&self) -> Wake {
        Wake(self.waker.clone())
    }

    /// Waits up to `timeout`; true when a watched subscription or a [`Wake`] ended the wait.
    pub fn wait(&mut self, timeout: Duration) -> bool {
        match self.poll.poll(&mut self.events, Some(timeout)) {
            Ok(()) => !self.events.is_empty(),
            // Interrupted by a signal: the caller's loop looks again.
            Err(_) => true,
        }
    }
}
