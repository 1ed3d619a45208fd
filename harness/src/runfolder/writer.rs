//! The writer of a run folder: rows to `run.jsonl`, pictures to `frames/`.
//!
//! [`RunWriter::create`] makes `<out>/<folder_name>/` and `frames/`. It refuses a folder that
//! already holds `run.jsonl` (`io::ErrorKind::AlreadyExists`): rows of two runs never mix.
//!
//! A run never destroys a finished folder before it has ended itself: it writes into
//! `<folder_name>.partial/` ([`RunWriter::create_partial`]), and only when it has ended does
//! [`publish`] give it its name, replacing a folder of that name at that moment. A run that cannot
//! start makes no folder (the harness checks its input and attaches first); a killed run leaves
//! its partial folder, an
//! incomplete run folder that `validate` and `score` show as such; a run whose rows could not all
//! be written (a full disk) is not published ([`RunWriter::write_failure`]).
//!
//! Each [`RunWriter::write`] writes one whole line with one `write` call on an unbuffered file, so
//! a killed run leaves every row written so far, and no half row unless the OS fails mid-write.
//!
//! No key value reaches the log: the writer replaces each occurrence of the value of a secret
//! environment variable ([`Secrets`]) by `[redacted]` in every string of the row (keys too), and
//! then in the encoded line (a secret that is a number). The list is taken at creation.

use std::borrow::Cow;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::rows::Row;
use super::{frame_file, is_frame_id, FRAMES_DIR, MAX_LINE_BYTES, RUN_FILE};

/// The suffix of a run folder while its run goes on (also the suffix of a sweep's run).
pub const PARTIAL_SUFFIX: &str = ".partial";

/// What replaces a secret value.
pub const REDACTED: &str = "[redacted]";

/// The words that make an environment variable secret (case-insensitive, anywhere in the name).
pub const SECRET_WORDS: [&str; 4] = ["KEY", "TOKEN", "SECRET", "PASSWORD"];

/// The shortest value that counts as a secret, characters.
pub const MIN_SECRET_CHARS: usize = 6;

/// The values to remove from every line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    /// The values, longest first, so that a secret inside another goes with it.
    values: Vec<String>,
}

impl Secrets {
    /// No secrets (for tests that need none).
    pub fn none() -> Self {
        Self::default()
    }

    /// The secrets of the process environment now.
    pub fn from_env() -> Self {
        Self::from_vars(
            std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// The secrets among `(name, value)` pairs: a name containing KEY, TOKEN, SECRET or PASSWORD
    /// (any case) and a value of at least 6 characters.
    ///
    /// ```
    /// use acres_harness::runfolder::Secrets;
    /// let s = Secrets::from_vars([("OPENAI_API_KEY", "sk-abcdef"), ("HOME", "/home/someone"), ("MY_TOKEN", "abc")]);
    /// assert_eq!(s.redact("key sk-abcdef at /home/someone"), "key [redacted] at /home/someone");
    /// ```
    pub fn from_vars<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let values = vars.into_iter().filter_map(|(name, value)| {
            let name = name.as_ref().to_ascii_uppercase();
            let secret = SECRET_WORDS.iter().any(|w| name.contains(w))
                && value.as_ref().chars().count() >= MIN_SECRET_CHARS;
            secret.then(|| value.as_ref().to_string())
        });
        Self::from_values(values)
    }

    /// Exactly these values (each of at least one character) as secrets.
    pub fn from_values(values: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<String> = values.into_iter().filter(|v| !v.is_empty()).collect();
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        Secrets { values }
    }

    /// These secrets and the values of the named environment variables (a model file's
    /// `api_key_env`, whatever its name), whatever their length.
    pub fn with_vars(self, names: &[String]) -> Self {
        let extra = names.iter().filter_map(|n| std::env::var(n).ok());
        Self::from_values(self.values.into_iter().chain(extra))
    }

    /// The number of secret values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there is no secret value.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with each occurrence of each secret replaced by `[redacted]`.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), REDACTED));
            }
        }
        out
    }

    /// Redacts every string and every key of a JSON value in place.
    fn redact_value(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(clean) = self.redact(s) {
                    *s = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut v) in entries {
                    self.redact_value(&mut v);
                    map.insert(self.redact(&key).into_owned(), v);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// Encodes a row as one line with every secret removed.
    pub fn encode(&self, row: &Row) -> String {
        if self.values.is_empty() {
            return row.encode();
        }
        let mut value = serde_json::to_value(row).expect("a row always serializes");
        self.redact_value(&mut value);
        let line = serde_json::to_string(&value).expect("a JSON value always serializes");
        // A secret left now is in a number: better a broken row than a leaked key.
        self.redact(&line).into_owned()
    }
}

/// Writes one run folder.
#[derive(Debug)]
pub struct RunWriter {
    folder: PathBuf,
    file: File,
    secrets: Secrets,
    rows: u64,
    /// The first write that failed (a row or a picture), if any.
    failure: Option<String>,
}

/// `<out>/<folder_name>.partial`: where a run writes until it has ended.
pub fn partial_path(out: &Path, folder_name: &str) -> PathBuf {
    out.join(format!("{folder_name}{PARTIAL_SUFFIX}"))
}

/// Gives the ended run's `<out>/<folder_name>.partial/` its name `<out>/<folder_name>/`. A folder
/// of that name (an earlier run) is moved aside to a hidden name first and removed once the new
/// one has its name, so a crash in between loses neither. Returns the final folder.
pub fn publish(out: &Path, folder_name: &str) -> io::Result<PathBuf> {
    let partial = partial_path(out, folder_name);
    let dest = out.join(folder_name);
    let aside = out.join(format!(".{folder_name}.replaced-{}", std::process::id()));
    let had_old = dest.exists();
    if had_old {
        // A folder with no rows is no result: the metering proxy's early `proxy.jsonl` (written
        // before the run began) goes on with the run.
        let early = dest.join(super::proxy::PROXY_FILE);
        if !dest.join(RUN_FILE).exists()
            && early.is_file()
            && !partial.join(super::proxy::PROXY_FILE).exists()
        {
            fs::rename(&early, partial.join(super::proxy::PROXY_FILE))?;
        }
        fs::rename(&dest, &aside)?;
    }
    if let Err(e) = fs::rename(&partial, &dest) {
        if had_old {
            // Put the earlier run back: nothing is lost.
            let _ = fs::rename(&aside, &dest);
        }
        return Err(e);
    }
    if had_old {
        fs::remove_dir_all(&aside)?;
    }
    Ok(dest)
}

/// Removes the partial folder of a run that failed before it wrote a row (nothing of value).
pub fn discard(out: &Path, folder_name: &str) -> io::Result<()> {
    let partial = partial_path(out, folder_name);
    match fs::remove_dir_all(&partial) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

impl RunWriter {
    /// Creates `<out>/<folder_name>/`, its `frames/` and an empty `run.jsonl`, with the secrets of
    /// the environment now. Fails with `AlreadyExists` when the folder holds `run.jsonl`.
    pub fn create(out: &Path, folder_name: &str) -> io::Result<RunWriter> {
        Self::create_with_secrets(out, folder_name, Secrets::from_env())
    }

    /// As [`RunWriter::create`], with the given secrets instead of those of the environment.
    pub fn create_with_secrets(out: &Path, folder_name: &str, secrets: Secrets) -> io::Result<RunWriter> {
        if folder_name.is_empty()
            || folder_name.contains(['/', '\\'])
            || folder_name == "."
            || folder_name == ".."
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad run folder name {folder_name:?}"),
            ));
        }
        let folder = out.join(folder_name);
        fs::create_dir_all(folder.join(FRAMES_DIR))?;
        // create_new: never append to, or truncate, the rows of another run.
        let file =
            OpenOptions::new().write(true).create_new(true).open(folder.join(RUN_FILE)).map_err(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    io::Error::new(
                        e.kind(),
                        format!("{} exists: remove the old run first", folder.join(RUN_FILE).display()),
                    )
                } else {
                    e
                }
            })?;
        Ok(RunWriter { folder, file, secrets, rows: 0, failure: None })
    }

    /// Creates `<out>/<folder_name>.partial/` as [`RunWriter::create`] does: the folder of a run
    /// that goes on. A partial folder left by a killed run of the same name is removed first (it
    /// never was a result); a finished `<out>/<folder_name>/` is left alone until [`publish`].
    pub fn create_partial(out: &Path, folder_name: &str, secrets: Secrets) -> io::Result<RunWriter> {
        let partial = format!("{folder_name}{PARTIAL_SUFFIX}");
        discard(out, folder_name)?;
        Self::create_with_secrets(out, &partial, secrets)
    }

    /// Removes `<out>/<folder_name>/` if it exists, then creates it as [`RunWriter::create`].
    pub fn recreate(out: &Path, folder_name: &str) -> io::Result<RunWriter> {
        Self::recreate_with_secrets(out, folder_name, Secrets::from_env())
    }

    /// As [`RunWriter::recreate`], with the given secrets.
    pub fn recreate_with_secrets(out: &Path, folder_name: &str, secrets: Secrets) -> io::Result<RunWriter> {
        let folder = out.join(folder_name);
        if !folder_name.is_empty() && folder.is_dir() {
            fs::remove_dir_all(&folder)?;
        }
        Self::create_with_secrets(out, folder_name, secrets)
    }

    /// The run folder.
    pub fn path(&self) -> &Path {
        &self.folder
    }

    /// The rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The first write that failed (a row or a picture: the folder is incomplete), if any.
    pub fn write_failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    fn note_failure<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r {
            if self.failure.is_none() && e.kind() != io::ErrorKind::InvalidInput {
                self.failure = Some(e.to_string());
            }
        }
        r
    }

    /// Writes one row as one line, at once. A row longer than
    /// [`MAX_LINE_BYTES`] is refused with `InvalidData`.
    pub fn write(&mut self, row: &Row) -> io::Result<()> {
        let mut line = self.secrets.encode(row);
        if line.len() > MAX_LINE_BYTES {
            let message =
                format!("a {} row of {} bytes, above {MAX_LINE_BYTES}", row.type_name(), line.len());
            return Err(io::Error::new(io::ErrorKind::InvalidData, message));
        }
        line.push('\n');
        // One write of the whole line to an unbuffered file: the OS has it when this returns.
        let written = self.file.write_all(line.as_bytes());
        self.note_failure(written)?;
        self.rows += 1;
        Ok(())
    }

    /// Writes the picture of frame `id` (`f0001`) to `frames/<id>.png` and returns that relative
    /// file for the frame row. Write the file before its row. Refuses a bad id or an existing file.
    pub fn write_frame(&mut self, id: &str, png: &[u8]) -> io::Result<String> {
        if !is_frame_id(id) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad frame id {id:?}")));
        }
        let file = frame_file(id);
        let path = self.folder.join(&file);
        let written =
            OpenOptions::new().write(true).create_new(true).open(path).and_then(|mut out| out.write_all(png));
        self.note_failure(written)?;
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runfolder::rows::RequestRow;

    #[test]
    fn secrets_with_json_escapes_and_longer_secrets_go() {
        let secrets = Secrets::from_values(["ab\"c\\def".to_string(), "abcdef".into(), "abcdefgh".into()]);
        let text = "x ab\"c\\def y abcdefgh z abcdef".to_string();
        let line = secrets.encode(&Row::Request(RequestRow { t: 0.0, wall: 0.0, text }));
        assert_eq!(
            Row::decode(&line).unwrap(),
            Row::Request(RequestRow {
                t: 0.0,
                wall: 0.0,
                text: "x [redacted] y [redacted] z [redacted]".into()
            })
        );
    }

    #[test]
    fn short_and_plain_variables_are_not_secret() {
        let secrets =
            Secrets::from_vars([("api_key", "12345"), ("HOME", "/root/home"), ("db_password", "hunter22")]);
        assert_eq!(secrets, Secrets::from_values(["hunter22".to_string()]));
    }
}
