//! The call gate of `calls_per_minute`: at most N requests in any 60 s of wall time, across every
//! run of one invocation — the threads of `--concurrent` and the processes of `--workers`.
//!
//! The gate is a small file of request times (UNIX seconds, one per line) under an exclusive
//! file lock; the parent process makes the file and passes its path to its workers, so every
//! process of one invocation shares it. A request that finds the window full waits, with the
//! world held, until the oldest request of the window is 60 s old.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::clock::wall_now as now_s;

/// The window of `calls_per_minute`, s.
pub const WINDOW_S: f64 = 60.0;

/// A margin on the window, s: a request reaches the server a little after it leaves the gate, and
/// the server's count of 60 s must hold too.
pub const MARGIN_S: f64 = 0.1;

/// A shared gate.
#[derive(Debug, Clone)]
pub struct Gate {
    file: PathBuf,
    per_minute: u32,
}

impl Gate {
    /// A gate over `file` (made if missing).
    pub fn new(file: &Path, per_minute: u32) -> std::io::Result<Self> {
        OpenOptions::new().create(true).append(true).open(file)?;
        Ok(Gate { file: file.to_path_buf(), per_minute: per_minute.max(1) })
    }

    /// The gate's file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Takes one slot, waiting while the window is full; `on_wait(s)` is told of each wait
    /// before it starts. Returns the time waited, s.
    pub fn acquire(&self, on_wait: &mut dyn FnMut(f64)) -> std::io::Result<f64> {
        let mut waited = 0.0;
        loop {
            let wait = self.try_take()?;
            if wait <= 0.0 {
                return Ok(waited);
            }
            on_wait(wait);
            std::thread::sleep(Duration::from_secs_f64(wait));
            waited += wait;
        }
    }

    /// Takes a slot now (returns 0) or says how long to wait for one.
    fn try_take(&self) -> std::io::Result<f64> {
        let mut f = OpenOptions::new().read(true).write(true).open(&self.file)?;
        f.lock()?;
        let r = self.take_locked(&mut f);
        let _ = f.unlock();
        r
    }

    fn take_locked(&self, f: &mut File) -> std::io::Result<f64> {
        let mut text = String::new();
        f.read_to_string(&mut text)?;
        let now = now_s();
        let mut times: Vec<f64> = text
            .lines()
            .filter_map(|l| l.trim().parse::<f64>().ok())
            .filter(|t| now - t < WINDOW_S + MARGIN_S)
            .collect();
        times.sort_by(f64::total_cmp);
        if times.len() >= self.per_minute as usize {
            let k = times.len() - self.per_minute as usize;
            return Ok((times[k] + WINDOW_S + MARGIN_S - now).max(0.001));
        }
        times.push(now);
        let body: String = times.iter().map(|t| format!("{t:.6}\n")).collect();
        f.set_len(0)?;
        f.seek(SeekFrom::Start(0))?;
        f.write_all(body.as_bytes())?;
        Ok(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_window_says_how_long_to_wait() {
        let dir = std::env::temp_dir().join(format!("acres-gate-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("gate");
        let _ = std::fs::remove_file(&file);
        let g = Gate::new(&file, 2).unwrap();
        assert_eq!(g.try_take().unwrap(), 0.0);
        assert_eq!(g.try_take().unwrap(), 0.0);
        let w = g.try_take().unwrap();
        assert!(w > 59.0 && w <= WINDOW_S + MARGIN_S, "{w}");
        // Old entries leave the window.
        std::fs::write(&file, format!("{}\n{}\n", now_s() - 61.0, now_s() - 30.0)).unwrap();
        assert_eq!(g.try_take().unwrap(), 0.0);
        let w = g.try_take().unwrap();
        assert!(w > 29.0 && w <= 30.0 + MARGIN_S, "{w}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
