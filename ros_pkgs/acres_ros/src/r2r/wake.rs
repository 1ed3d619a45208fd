//! Waiting for ROS data instead of polling for it, on the r2r backend: a [`Waiter`] blocks its
//! thread until a subscription it watches has a new sample, another thread calls [`Wake::wake`],
//! or a timeout passes, whichever comes first (the same API as the ros2-client backend's).
//!
//! The node's spinner thread moves each sample rcl takes into its subscription's queue and then
//! calls the task waker of the waiter watching it (a condition variable): nothing is missed, and
//! a wake-up that comes while the waiter is not waiting is kept for its next wait.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::task::Waker;
use std::time::Duration;

use crate::node::{NodeError, Sub};
use acres_msgs::Message;

/// How often a waiting loop still looks at what it does not wait on (the action server's and
/// client's requests and replies), as on the ros2-client backend.
pub const ACTION_POLL: Duration = Duration::from_micros(500);

/// A raised flag and the condition variable a waiting thread sleeps on.
#[derive(Default)]
struct Signal {
    raised: Mutex<bool>,
    cv: Condvar,
}

impl std::task::Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        *self.raised.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.cv.notify_one();
    }
}

/// Blocks a thread until a watched subscription has data, a [`Wake`] is called, or a timeout.
pub struct Waiter {
    signal: Arc<Signal>,
    watched: usize,
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiter").field("watched", &self.watched).finish()
    }
}

/// A handle another thread uses to end the [`Waiter`]'s wait (cheap to clone).
#[derive(Clone)]
pub struct Wake(Arc<Signal>);

impl std::fmt::Debug for Wake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Wake")
    }
}

impl Wake {
    /// Ends the waiter's current wait, or its next one if it is not waiting.
    pub fn wake(&self) {
        std::task::Wake::wake_by_ref(&self.0);
    }
}

impl Waiter {
    /// A waiter that watches nothing yet.
    pub fn new() -> Result<Waiter, NodeError> {
        Ok(Waiter { signal: Arc::new(Signal::default()), watched: 0 })
    }

    /// Watches `sub`: a new sample on it ends the wait.
    pub fn watch<M: Message + 'static>(&mut self, sub: &mut Sub<M>) -> Result<(), NodeError> {
        sub.set_waker(Waker::from(self.signal.clone()));
        self.watched += 1;
        Ok(())
    }

    /// A handle that ends the wait from another thread.
    pub fn wake_handle(&self) -> Wake {
        Wake(self.signal.clone())
    }

    /// Waits up to `timeout`; true when a watched subscription or a [`Wake`] ended the wait.
    pub fn wait(&mut self, timeout: Duration) -> bool {
        let raised = self.signal.raised.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut raised, _) = self
            .signal
            .cv
            .wait_timeout_while(raised, timeout, |r| !*r)
            .unwrap_or_else(PoisonError::into_inner);
        std::mem::replace(&mut *raised, false)
    }
}
