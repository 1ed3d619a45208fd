//! The system's `ffmpeg`: the encoder chain and the pipe of raw frames.
//!
//! The chain is `h264_nvenc` → `libx264` (when this ffmpeg has it) → `libopenh264` → `mpeg4`.
//! Debian's ffmpeg lists encoders that it cannot run (nvenc without an NVIDIA driver), so each
//! is probed by encoding a tiny clip of three frames; the first that succeeds is used. Frames go
//! to ffmpeg's stdin as raw RGBA (`-f rawvideo -pix_fmt rgba`), the file is H.264 (or MPEG-4
//! part 2) in yuv420p, with `+faststart`.

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

/// One encoder and its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoder {
    /// The ffmpeg encoder name.
    pub name: &'static str,
    /// Its options.
    pub args: &'static [&'static str],
}

/// The chain, in order of preference.
pub const CHAIN: [Encoder; 4] = [
    Encoder { name: "h264_nvenc", args: &["-preset", "p4", "-b:v", "8M"] },
    Encoder { name: "libx264", args: &["-preset", "veryfast", "-crf", "23"] },
    Encoder { name: "libopenh264", args: &["-b:v", "8M"] },
    Encoder { name: "mpeg4", args: &["-q:v", "4"] },
];

/// Whether `ffmpeg` runs at all.
pub fn ffmpeg_version() -> Option<String> {
    let out = Command::new("ffmpeg").arg("-version").stderr(Stdio::null()).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string())
}

fn listed() -> String {
    Command::new("ffmpeg")
        .args(["-hide_banner", "-encoders"])
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// Whether the encoder encodes a tiny clip into `dir`.
pub fn works(enc: &Encoder, dir: &Path) -> bool {
    let (w, h) = (256u32, 144u32);
    let file = dir.join(format!("probe-{}.mp4", enc.name));
    let Ok(mut pipe) = Pipe::start(enc, &file, 30.0, w, h, Stdio::null()) else { return false };
    let frame = vec![128u8; (w * h * 4) as usize];
    let wrote = (0..3).all(|_| pipe.write(&frame).is_ok());
    let ok = pipe.finish().is_ok() && wrote && std::fs::metadata(&file).is_ok_and(|m| m.len() > 0);
    let _ = std::fs::remove_file(&file);
    ok
}

/// The first encoder of the chain that this ffmpeg lists and can run, with the names of those
/// tried before it.
pub fn choose(dir: &Path) -> Option<(Encoder, Vec<&'static str>)> {
    let list = listed();
    let mut tried = Vec::new();
    for enc in CHAIN {
        let named = list.lines().any(|l| l.split_whitespace().nth(1) == Some(enc.name));
        if named && works(&enc, dir) {
            return Some((enc, tried));
        }
        tried.push(enc.name);
    }
    None
}

/// A running ffmpeg that takes raw RGBA frames on stdin.
pub struct Pipe {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Pipe {
    /// Starts ffmpeg writing `out` at `fps` from frames of `w` × `h`; its messages go to `stderr`.
    pub fn start(
        enc: &Encoder,
        out: &Path,
        fps: f64,
        w: u32,
        h: u32,
        stderr: Stdio,
    ) -> std::io::Result<Pipe> {
        let mut cmd = Command::new("ffmpeg");
        cmd.args(["-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgba"])
            .args(["-s", &format!("{w}x{h}"), "-framerate", &format!("{fps}"), "-i", "-"])
            .args(["-c:v", enc.name])
            .args(enc.args)
            .args(["-pix_fmt", "yuv420p", "-r", &format!("{fps}"), "-movflags", "+faststart"])
            .arg(out)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(stderr);
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take();
        Ok(Pipe { child, stdin })
    }

    /// Writes one frame.
    pub fn write(&mut self, rgba: &[u8]) -> std::io::Result<()> {
        match self.stdin.as_mut() {
            Some(s) => s.write_all(rgba),
            None => Err(std::io::Error::other("ffmpeg's stdin is closed")),
        }
    }

    /// Closes stdin and waits for ffmpeg; an error when it fails.
    pub fn finish(mut self) -> std::io::Result<()> {
        drop(self.stdin.take());
        let status = self.child.wait()?;
        if status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!("ffmpeg ended with {status}")))
        }
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
