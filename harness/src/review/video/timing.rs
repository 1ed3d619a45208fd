//! The clock of a video: which mission time each video frame shows.
//!
//! Between the wake-ups the video runs at `speed` mission seconds per video second; during a
//! model call (from its request time to its reply, the request time plus the latency) and for
//! [`AFTER_REPLY_S`] after the reply it runs at `think_speed`. Overlapping windows merge. The
//! duration of a video from `from_s` to `to_s` is therefore
//! `(to − from − thinking) / speed + thinking / think_speed`, with `thinking` the mission time
//! the merged windows cover inside `[from_s, to_s]`; frame `i` shows the mission time at video
//! time `i / fps`, and a video has `ceil(duration · fps)` frames (at least one).

use crate::review::model::Timeline;

/// The mission time after a reply still shown at the think speed, s.
pub const AFTER_REPLY_S: f64 = 2.0;

/// One stretch of mission time played at one rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// Mission time at the start, s.
    pub t0_s: f64,
    /// Mission time at the end, s.
    pub t1_s: f64,
    /// Mission seconds per video second.
    pub rate: f64,
    /// Video time at the start, s.
    pub v0_s: f64,
    /// Whether the model thinks (the think speed).
    pub thinking: bool,
}

/// The map from video time to mission time.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeMap {
    /// The segments in order, covering `[from_s, to_s]`.
    pub segments: Vec<Segment>,
    /// The video's length, s.
    pub duration_s: f64,
}

/// The think windows of a timeline: each call from its request to its reply plus
/// [`AFTER_REPLY_S`] (to `t_end_s` while unanswered), merged, in order.
pub fn think_windows(tl: &Timeline) -> Vec<(f64, f64)> {
    merge(tl.calls.iter().map(|c| (c.t0_s, c.t1_s.unwrap_or(tl.t_end_s) + AFTER_REPLY_S)).collect())
}

/// Windows `(from, to)` sorted and merged where they overlap or touch.
pub fn merge(mut w: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    w.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (a, b) in w {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

impl TimeMap {
    /// The map for `[from_s, to_s]` with the given think windows (merged here) and speeds (both
    /// > 0).
    pub fn new(from_s: f64, to_s: f64, windows: &[(f64, f64)], speed: f64, think_speed: f64) -> TimeMap {
        let mut cuts = vec![(from_s, false)];
        for (a, b) in merge(windows.to_vec()) {
            let (a, b) = (a.max(from_s), b.min(to_s));
            if b > a {
                cuts.push((a, true));
                cuts.push((b, false));
            }
        }
        cuts.push((to_s, false));
        let mut segments = Vec::new();
        let mut v_s = 0.0;
        for pair in cuts.windows(2) {
            let ((t0, thinking), (t1, _)) = (pair[0], pair[1]);
            if t1 > t0 {
                let rate = if thinking { think_speed } else { speed };
                segments.push(Segment { t0_s: t0, t1_s: t1, rate, v0_s: v_s, thinking });
                v_s += (t1 - t0) / rate;
            }
        }
        TimeMap { segments, duration_s: v_s }
    }

    /// The mission time at video time `v_s`, and whether the model thinks then.
    pub fn at(&self, v_s: f64) -> (f64, bool) {
        let i = self.segments.partition_point(|s| s.v0_s <= v_s).saturating_sub(1);
        match self.segments.get(i) {
            Some(s) => ((s.t0_s + (v_s - s.v0_s) * s.rate).min(s.t1_s), s.thinking),
            None => (0.0, false),
        }
    }

    /// The number of frames at `fps`: `ceil(duration · fps)`, at least 1.
    pub fn frames(&self, fps: f64) -> usize {
        ((self.duration_s * fps - 1e-9).ceil() as usize).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinking_runs_at_the_think_speed_and_the_rest_at_the_speed() {
        let m = TimeMap::new(0.0, 120.0, &[(10.0, 14.0), (12.0, 20.0)], 12.0, 1.0);
        // 10 s of thinking at 1x, 110 s at 12x.
        assert!((m.duration_s - (10.0 + 110.0 / 12.0)).abs() < 1e-9);
        assert_eq!(m.at(0.5), (6.0, false));
        let (t, thinking) = m.at(10.0 / 12.0 + 3.0);
        assert!((t - 13.0).abs() < 1e-9 && thinking);
        assert_eq!(m.frames(30.0), (m.duration_s * 30.0).ceil() as usize);
        let clipped = TimeMap::new(15.0, 18.0, &[(10.0, 20.0)], 12.0, 2.0);
        assert!((clipped.duration_s - 1.5).abs() < 1e-9);
    }
}
