//! The line protocol face (`acres-harness agent serve`): a Unix socket, one JSON command per
//! line, one JSON reply per line, so a shell script or an agent with a shell can play a run with
//! `acres-harness agent send|wait|status|end`.
//!
//! Commands (client → server), tagged by `"command"`, unknown keys refused:
//!
//! ```json
//! {"command": "send", "tool": "dispatch", "arguments": {"skill": "goto", "arguments": {"field": "F53"}}}
//! {"command": "wait"}
//! {"command": "status"}
//! {"command": "end"}
//! ```
//!
//! Every reply carries `ok`, `phase` (`starting`, `turn`, `world`, `ended`), `t_s` (mission time)
//! and `wake_ups`; then:
//! - `send`: `result` (the tool's result object), `frame` and `picture` (the PNG's path in the run
//!   folder) for `look`. Outside the agent's turn it is refused at once with `error`, never queued.
//! - `wait`: ends the turn and blocks until the next wake-up: `wake` (the message), `detail` (its
//!   JSON line), `frame` and `picture` in the visual and checked modes.
//! - `status`: also `skill`, `progress`, and `end`/`success` once the run has ended.
//! - `end`: ends the run the normal way: the turn ends and every later wake-up is answered by
//!   ending the turn, until the run ends; the reply has the end code and `success`.
//!
//! After the end, `send` and `wait` answer `ok: false` with the end code. A line longer than
//! [`MAX_LINE`] bytes or that is not a command is answered `ok: false` with the problem.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use super::session::{AgentPort, Answer, Picture};
use crate::tools::export::drop_nulls;

/// The longest command line, bytes.
pub const MAX_LINE: usize = 1 << 20;

/// One command of the line protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub enum LineCommand {
    /// Runs one tool.
    Send {
        /// The tool's name.
        tool: String,
        /// Its arguments.
        #[serde(default = "empty_object")]
        arguments: Value,
    },
    /// Ends the turn and waits for the next wake-up.
    Wait {},
    /// The run's status.
    Status {},
    /// Ends the run the normal way.
    End {},
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// The line face of one run: the port, the tools it takes, the frames folder.
#[derive(Clone)]
pub struct LineFace {
    port: AgentPort,
    tools: Vec<String>,
    frames: PathBuf,
}

impl LineFace {
    /// A face for `port` taking the tools `tools` (the mode's, filtered for `--read-only`);
    /// pictures are in `frames` (the run folder's `frames/`).
    pub fn new(port: AgentPort, tools: Vec<String>, frames: PathBuf) -> Self {
        LineFace { port, tools, frames }
    }

    /// The reply to one line.
    pub async fn reply(&self, line: &str) -> Value {
        let cmd: LineCommand = match serde_json::from_str(line) {
            Ok(c) => c,
            Err(e) => return self.with_status(json!({"ok": false, "error": format!("not a command: {e}")})),
        };
        let body = match cmd {
            LineCommand::Status {} => {
                let s = self.port.status();
                json!({"ok": true, "skill": s.skill, "progress": s.progress, "end": s.end, "success": s.success})
            }
            LineCommand::Send { tool, arguments } => {
                if !self.tools.contains(&tool) {
                    let text = format!("unknown tool \"{tool}\"; the tools are {}", self.tools.join(", "));
                    json!({"ok": false, "error": text})
                } else {
                    self.answer(&self.port.tool(&tool, drop_nulls(&arguments)).await)
                }
            }
            LineCommand::Wait {} => self.answer(&self.port.wait_for_wake().await),
            LineCommand::End {} => loop {
                if let a @ Answer::Ended { .. } = self.port.wait_for_wake().await {
                    let mut v = a.to_json();
                    v["ok"] = json!(true);
                    if let Some(o) = v.as_object_mut() {
                        o.remove("error");
                    }
                    break v;
                }
            },
        };
        self.with_status(body)
    }

    fn answer(&self, a: &Answer) -> Value {
        let mut v = a.to_json();
        let picture = match a {
            Answer::Tool { picture, .. } | Answer::Wake { picture, .. } => picture.as_ref(),
            _ => None,
        };
        if let Some(p) = picture {
            v["picture"] = json!(self.picture_path(p).display().to_string());
        }
        if let Answer::Wake { message, .. } = a {
            v["detail"] = crate::planners::wake::parse_detail(message).unwrap_or(Value::Null);
        }
        v
    }

    fn picture_path(&self, p: &Picture) -> PathBuf {
        self.frames.join(format!("{}.png", p.frame))
    }

    /// `body` with the status every reply carries (`phase`, `t_s`, `wake_ups`) first.
    fn with_status(&self, body: Value) -> Value {
        let s = self.port.status();
        let mut out = Map::new();
        out.insert("ok".into(), body.get("ok").cloned().unwrap_or(json!(false)));
        out.insert("phase".into(), json!(s.phase));
        out.insert("t_s".into(), json!((s.t_s * 10.0).round() / 10.0));
        out.insert("wake_ups".into(), json!(s.wake_ups));
        if let Value::Object(o) = body {
            for (k, v) in o {
                out.entry(k).or_insert(v);
            }
        }
        Value::Object(out)
    }
}

/// Binds the Unix socket `path` (a stale socket file there is replaced).
pub fn bind(path: &Path) -> std::io::Result<std::os::unix::net::UnixListener> {
    let _ = std::fs::remove_file(path);
    let l = std::os::unix::net::UnixListener::bind(path)?;
    l.set_nonblocking(true)?;
    Ok(l)
}

/// Serves the face on `listener` (bound at `path` by [`bind`]) until the run has ended and
/// `linger_s` more have passed; the socket file goes then, and the replies still being written
/// get up to [`REPLY_GRACE`] to go out.
pub async fn serve(
    face: LineFace,
    listener: std::os::unix::net::UnixListener,
    path: &Path,
    linger_s: f64,
) -> std::io::Result<()> {
    let listener = tokio::net::UnixListener::from_std(listener)?;
    let port = face.port.clone();
    let over = async {
        port.ended().await;
        tokio::time::sleep(Duration::from_secs_f64(linger_s.max(0.0))).await;
    };
    tokio::pin!(over);
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = accepted?;
                let face = face.clone();
                connections.spawn(async move { let _ = connection(face, stream).await; });
            }
            _ = &mut over => break,
        }
    }
    let _ = std::fs::remove_file(path);
    // The reply that ended the run (an `end`, a call that used the last of the deadline) may
    // still be on its way: give the open connections a moment to write it and close, so that
    // `--linger-s 0` never cuts a reply short.
    let _ =
        tokio::time::timeout(REPLY_GRACE, async { while connections.join_next().await.is_some() {} }).await;
    Ok(())
}

/// How long [`serve`] waits, after the run has ended and lingered, for replies still being written.
const REPLY_GRACE: Duration = Duration::from_secs(2);

/// One connection: each line gets one reply line.
async fn connection(face: LineFace, stream: tokio::net::UnixStream) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        let reply = if buf.len() > MAX_LINE && !buf.ends_with(b"\n") {
            face.with_status(
                json!({"ok": false, "error": format!("the line is longer than {MAX_LINE} bytes")}),
            )
        } else {
            face.reply(String::from_utf8_lossy(&buf).trim()).await
        };
        let mut text = reply.to_string();
        text.push('\n');
        write.write_all(text.as_bytes()).await?;
    }
}

/// Sends one command to the server at `path` and returns its reply (the client of `agent send`,
/// `wait`, `status`, `end`).
pub fn request(path: &Path, cmd: &LineCommand) -> std::io::Result<Value> {
    use std::io::{BufRead, Write};
    let mut s = std::os::unix::net::UnixStream::connect(path)?;
    let mut line = serde_json::to_string(cmd).map_err(std::io::Error::other)?;
    line.push('\n');
    s.write_all(line.as_bytes())?;
    let mut reply = String::new();
    std::io::BufReader::new(s).read_line(&mut reply)?;
    serde_json::from_str(&reply).map_err(|e| std::io::Error::other(format!("the server's reply: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip_and_unknown_keys_are_refused() {
        let cmds = [
            LineCommand::Send { tool: "read".into(), arguments: json!({"what": "vehicle"}) },
            LineCommand::Wait {},
            LineCommand::Status {},
            LineCommand::End {},
        ];
        for c in cmds {
            let text = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<LineCommand>(&text).unwrap(), c, "{text}");
        }
        let c: LineCommand = serde_json::from_str(r#"{"command": "send", "tool": "read"}"#).unwrap();
        assert_eq!(c, LineCommand::Send { tool: "read".into(), arguments: json!({}) });
        assert!(serde_json::from_str::<LineCommand>(r#"{"command": "wait", "x": 1}"#).is_err());
        assert!(serde_json::from_str::<LineCommand>(r#"{"command": "steer"}"#).is_err());
    }
}
