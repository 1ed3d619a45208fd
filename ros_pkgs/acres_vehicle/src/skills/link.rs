//! The link hold: the vehicle node's deadman pauses the running skill while the planner's
//! heartbeats are missing, and lets it go on when they return.
//!
//! While held, [`SkillServer::control`] commands a standstill and the skill does not advance:
//! its clocks (a wait's end, the no-progress and shield-hold timers, a learned skill's `max_s`)
//! are moved on by the held time at the release, so a hold costs the skill nothing but the time.
//! `link_hold` and `link_release` (with `held_s`, mission time) are its events; every
//! `link_hold` has its `link_release`, `why` "the skill ended" when the skill ends held. The
//! in-process world never calls these: it has no link.

use super::*;

impl SkillServer {
    /// Holds the running skill (the beats stopped): a standstill from the next control step on,
    /// and the `link_hold` event with `cause`. False when nothing runs or it is already held.
    pub fn link_hold(&mut self, cause: String, t_s: f64) -> bool {
        if self.running.is_none() || self.link_hold_since.is_some() {
            return false;
        }
        self.t_s = t_s;
        self.link_hold_since = Some(t_s);
        let (id, kind) = self.running.as_ref().map(|r| (r.id, r.kind)).unzip();
        self.event(EventName::LinkHold, id, kind, None, Some(cause), EventDetail::None {});
        true
    }

    /// Ends the link hold (the beats returned): the skill goes on by itself, its clocks moved on
    /// by the held time; the `link_release` event. The held time in mission seconds, or `None`
    /// when nothing was held.
    pub fn link_release(&mut self, t_s: f64) -> Option<f64> {
        let since = self.link_hold_since.take()?;
        self.t_s = t_s;
        let held_s = (t_s - since).max(0.0);
        let Some(r) = self.running.as_mut() else { return Some(held_s) };
        match &mut r.active {
            Active::Wait { until_s } => *until_s += held_s,
            Active::Motion(m) => {
                m.best_t += held_s;
                if let Some(h) = m.hold_since.as_mut() {
                    *h += held_s;
                }
                if let Some(l) = m.learned.as_mut() {
                    l.shift(held_s);
                }
            }
        }
        let (id, kind) = (r.id, r.kind);
        let detail = EventDetail::Release {
            held_s,
            ahead_m: finite(self.ahead_m),
            why: Some("heartbeats returned".into()),
        };
        self.event(EventName::LinkRelease, Some(id), Some(kind), None, None, detail);
        Some(held_s)
    }

    /// True while the link hold holds the running skill.
    pub fn link_held(&self) -> bool {
        self.link_hold_since.is_some()
    }

    /// The link hold ends with the skill (`finish`): its `link_release`, `why` "the skill ended".
    pub(super) fn link_release_at_end(&mut self, id: u64, kind: SkillKind, t_s: f64) {
        if let Some(since) = self.link_hold_since.take() {
            let detail = EventDetail::Release {
                held_s: (t_s - since).max(0.0),
                ahead_m: finite(self.ahead_m),
                why: Some("the skill ended".into()),
            };
            self.event(EventName::LinkRelease, Some(id), Some(kind), None, None, detail);
        }
    }
}
