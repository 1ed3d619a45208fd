//! The plugin's process: started with piped standard input and output, its output read by a
//! thread of its own into a channel (so a reply can be waited for with a deadline), killed and
//! reaped when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use acres_scenario::local_planner::ProcessCommand;

use super::wire::MAX_LINE_BYTES;

/// What the reader thread hands over.
#[derive(Debug)]
pub enum Line {
    /// One line (without its newline).
    Text(String),
    /// A line longer than [`MAX_LINE_BYTES`].
    Oversized,
    /// Bytes that are not UTF-8.
    NotUtf8,
    /// The output closed (the process exited or closed it).
    Closed,
}

/// Why no line came.
#[derive(Debug)]
pub enum Wait {
    /// The deadline passed.
    Timeout,
    /// The output closed.
    Closed,
}

/// A running plugin process.
#[derive(Debug)]
pub struct PluginChild {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
}

impl PluginChild {
    /// Starts the process of `cmd` in its folder.
    pub fn spawn(cmd: &ProcessCommand) -> std::io::Result<PluginChild> {
        let mut child = Command::new(&cmd.program)
            .args(&cmd.args)
            .current_dir(&cmd.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = sync_channel(4);
        std::thread::Builder::new().name("local-planner-reader".into()).spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let line = read_line(&mut r);
                let closed = matches!(line, Line::Closed | Line::Oversized);
                if tx.send(line).is_err() || closed {
                    break;
                }
            }
        })?;
        Ok(PluginChild { child, stdin, lines })
    }

    /// Writes one line; an error means the process no longer reads (it exited).
    pub fn send(&mut self, line: &str) -> std::io::Result<()> {
        let w = self.stdin.as_mut().ok_or_else(|| std::io::Error::other("the input is closed"))?;
        w.write_all(line.as_bytes())?;
        w.write_all(b"\n")?;
        w.flush()
    }

    /// The next line, waiting until `deadline`.
    pub fn recv(&mut self, deadline: Instant) -> Result<Line, Wait> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(Line::Closed) => Err(Wait::Closed),
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(Wait::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(Wait::Closed),
        }
    }

    /// The exit status, waiting for it up to `within` (a process that closed its output is
    /// usually exiting).
    pub fn exit_status(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => return Some(s),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                _ => return None,
            }
        }
    }

    /// Says `exit` (the line given), closes the input, and gives the process `grace` to end
    /// before it is killed.
    pub fn close(&mut self, exit_line: &str, grace: Duration) {
        if self.stdin.is_some() {
            let _ = self.send(exit_line);
        }
        self.stdin = None;
        if self.exit_status(grace).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Drop for PluginChild {
    fn drop(&mut self) {
        self.stdin = None;
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Reads one line of at most [`MAX_LINE_BYTES`].
fn read_line(r: &mut impl BufRead) -> Line {
    let mut buf = Vec::new();
    match r.by_ref().take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut buf) {
        Ok(0) | Err(_) => Line::Closed,
        Ok(_) => {
            if buf.last() == Some(&b'\n') {
                buf.pop();
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
            } else if buf.len() > MAX_LINE_BYTES {
                return Line::Oversized;
            }
            match String::from_utf8(buf) {
                Ok(s) => Line::Text(s),
                Err(_) => Line::NotUtf8,
            }
        }
    }
}
