//! One rosbag2-compatible MCAP file: profile `ros2`, one `ros2msg` schema per message type (the
//! full text with dependencies from `acres_msgs`), channels with message encoding `cdr` and the
//! `offered_qos_profiles` metadata, zstd chunks (without CRCs: see [`CRCS`]), a summary with
//! Statistics and its CRC.
//!
//! The file is written as `<name>.part` and renamed to `<name>` by [`Bag::finish`]. The bag
//! closes its chunks itself and hands each closed chunk to the operating system at once, so a
//! process killed mid-run leaves a `.part` file whose every complete chunk a stream reader
//! recovers. A chunk is closed
//! - when it holds [`CHUNK_SIZE_BYTES`] before compression;
//! - at the first message [`FLUSH_EVERY_S`] of mission time after the chunk's first message,
//!   once the chunk has been open [`FLUSH_MIN_WALL_S`] of wall time (a fast run gets chunks of
//!   the full size, which compress several times better and cheaper than 2 s ones; a run near
//!   real time gets one chunk each 2 s of mission time, which bounds the file's size);
//! - by [`Bag::flush`] (the writer thread calls it when no message has come for a while).
//!
//! So a killed process loses the open chunk: at most the last [`FLUSH_EVERY_S`] of mission time
//! or the last [`FLUSH_MIN_WALL_S`] of wall time, whichever holds more, and never more than one
//! chunk of [`CHUNK_SIZE_BYTES`].
//!
//! The QoS metadata is the YAML rosbag2 writes, with integer policies (history 1 keep last,
//! reliability 1 reliable / 2 best effort, durability 1 transient local / 2 volatile, liveliness
//! 1 automatic) and durations of 0 (the default). Humble reads integers; Jazzy and later read
//! integers when the file's `rosbag2` metadata record has no serialized metadata (they take it as
//! version 8), so each file carries that record, empty.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use acres_msgs::Message;
use mcap::records::MessageHeader;

/// Mission time a chunk spans at least before the time rule closes it, s.
pub const FLUSH_EVERY_S: f64 = 2.0;

/// Wall time a chunk is open at least before the time rule closes it, s.
pub const FLUSH_MIN_WALL_S: f64 = 0.1;

/// The largest chunk before compression, bytes (a chunk is closed when it reaches this).
pub const CHUNK_SIZE_BYTES: u64 = 4 * 1024 * 1024;

/// The zstd level of the chunks: -3, one of zstd's fast levels. Measured on t1_05 by the
/// recording benchmark with 1 Hz clouds throughout: level -1 added 55 % to a fast run's wall
/// time, -3 39–43 %, with files of the same size for a fast run and a run near real time (t1_05
/// at `--pace 20`: 40.9 MB per 30 mission minutes, -1 40.4 MB); -5 added 36 % but passed the
/// 50 MB budget near real time (52.9 MB). With the clouds' rate following the scan, -5 gave no
/// gain the benchmark could tell from its noise.
pub const ZSTD_LEVEL: i32 = -3;

/// Whether the chunks and DataEnd carry CRCs. The mcap crate computes the data section's CRC
/// right only together with the chunk CRCs (each chunk's bytes before and after compression),
/// which cost more of a recording's time than its budget has left; without them it writes a
/// wrong data-section CRC, so both are off: 0 is the format's "not computed", which strict
/// readers accept. The summary section's CRC is always written. `docs/run-folder.md` has the
/// measurement.
pub const CRCS: bool = false;

/// The bytes a message record adds to its data in a chunk (opcode, length, header).
const MESSAGE_RECORD_BYTES: u64 = 1 + 8 + 2 + 4 + 8 + 8 + 4;

/// Mission time between two looks at the wall clock while a chunk waits for its wall time, ns.
const WALL_CHECK_EVERY_NS: u64 = 100_000_000;

/// A recording error: the file could not be made, written or renamed.
#[derive(Debug, thiserror::Error)]
pub enum BagError {
    /// The file could not be created.
    #[error("cannot create {path}: {source}")]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The MCAP writer failed.
    #[error("{path}: {source}")]
    Mcap {
        /// The file.
        path: PathBuf,
        /// Why.
        source: mcap::McapError,
    },
    /// The recording thread stopped (a panic, or a message after an error).
    #[error("the recording thread stopped")]
    Stopped,
    /// The finished file could not be flushed or renamed.
    #[error("cannot finish {path}: {source}")]
    Finish {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The quality of service a channel is offered with (as a ROS 2 publisher would).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qos {
    /// Keep last `depth` messages.
    pub depth: u32,
    /// Reliable (else best effort).
    pub reliable: bool,
    /// Transient local (latched; else volatile).
    pub transient_local: bool,
}

impl Qos {
    /// Reliable, volatile, keep last `depth` (the rclcpp default with depth 10).
    pub const fn reliable(depth: u32) -> Qos {
        Qos { depth, reliable: true, transient_local: false }
    }
    /// Best effort, volatile, keep last 5 (rclcpp's `SensorDataQoS`).
    pub const SENSOR: Qos = Qos { depth: 5, reliable: false, transient_local: false };
    /// Reliable, transient local, keep last 1 (latched: the map, static transforms).
    pub const LATCHED: Qos = Qos { depth: 1, reliable: true, transient_local: true };

    /// The `offered_qos_profiles` value: a YAML list of one profile, as rosbag2 writes it.
    pub fn yaml(&self) -> String {
        let zero = "\n    sec: 0\n    nsec: 0";
        format!(
            "- history: 1\n  depth: {}\n  reliability: {}\n  durability: {}\n  deadline:{zero}\n  lifespan:{zero}\n  liveliness: 1\n  liveliness_lease_duration:{zero}\n  avoid_ros_namespace_conventions: false",
            self.depth,
            if self.reliable { 1 } else { 2 },
            if self.transient_local { 1 } else { 2 },
        )
    }
}

/// Mission time in nanoseconds (the log and publish time of every message).
pub fn time_ns(t_s: f64) -> u64 {
    (t_s.max(0.0) * 1e9).round() as u64
}

/// The chunk being written.
#[derive(Debug, Clone, Copy)]
struct OpenChunk {
    /// When its first message was written (wall clock).
    opened: Instant,
    /// Its size before compression, bytes (records of the messages).
    bytes: u64,
    /// The time rule looks at the wall clock again at this mission time, ns.
    next_check_ns: u64,
}

/// One MCAP file being written.
pub struct Bag {
    writer: mcap::Writer<BufWriter<File>>,
    part: PathBuf,
    path: PathBuf,
    schemas: HashMap<&'static str, u16>,
    channels: BTreeMap<String, u16>,
    sequence: u32,
    chunk: Option<OpenChunk>,
    chunks: u32,
    /// The buffer each message is encoded into.
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Bag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bag").field("path", &self.path).field("channels", &self.channels).finish()
    }
}

impl Bag {
    /// Creates `<path>.part` (replacing one left by an earlier run).
    pub fn create(path: &Path) -> Result<Bag, BagError> {
        let mut part = path.as_os_str().to_owned();
        part.push(".part");
        let part = PathBuf::from(part);
        let file = File::create(&part).map_err(|source| BagError::Create { path: part.clone(), source })?;
        let mcap_err = |source| BagError::Mcap { path: part.clone(), source };
        let mut writer = mcap::WriteOptions::new()
            .profile("ros2")
            .compression(Some(mcap::Compression::Zstd))
            // The level travels as u32 and is turned back into zstd's i32 (negative levels too).
            .compression_level(ZSTD_LEVEL as u32)
            .compression_threads(0)
            // See CRCS: the chunks' and the data section's CRCs go together (mcap 0.26 folds
            // the chunks' stored bytes into the data section's CRC only with the chunk CRCs).
            .calculate_chunk_crcs(CRCS)
            .calculate_data_section_crc(CRCS)
            // The bag closes its chunks itself (see the module docs).
            .chunk_size(None)
            .create(BufWriter::with_capacity(1 << 20, file))
            .map_err(mcap_err)?;
        let meta = mcap::records::Metadata {
            name: "rosbag2".into(),
            metadata: BTreeMap::from([("serialized_metadata".to_string(), String::new())]),
        };
        writer.write_metadata(&meta).map_err(mcap_err)?;
        Ok(Bag {
            writer,
            part,
            path: path.to_path_buf(),
            schemas: HashMap::new(),
            channels: BTreeMap::new(),
            sequence: 0,
            chunk: None,
            chunks: 0,
            scratch: Vec::new(),
        })
    }

    fn err(&self, source: mcap::McapError) -> BagError {
        BagError::Mcap { path: self.part.clone(), source }
    }

    /// Adds the channel `topic` of message type `M`; gives its id.
    pub fn channel<M: Message>(&mut self, topic: &str, qos: Qos) -> Result<u16, BagError> {
        let schema = match self.schemas.get(M::ROS_NAME) {
            Some(id) => *id,
            None => {
                let id = self
                    .writer
                    .add_schema(M::ROS_NAME, "ros2msg", M::schema_text().as_bytes())
                    .map_err(|e| self.err(e))?;
                self.schemas.insert(M::ROS_NAME, id);
                id
            }
        };
        let metadata = BTreeMap::from([("offered_qos_profiles".to_string(), qos.yaml())]);
        let id = self.writer.add_channel(schema, topic, "cdr", &metadata).map_err(|e| self.err(e))?;
        self.channels.insert(topic.to_string(), id);
        Ok(id)
    }

    /// Writes one message at mission time `t_ns` (log and publish time).
    pub fn write<M: Message>(&mut self, channel: u16, t_ns: u64, msg: &M) -> Result<(), BagError> {
        let mut buf = std::mem::take(&mut self.scratch);
        msg.encode_into(&mut buf);
        let written = self.write_bytes(channel, t_ns, &buf);
        self.scratch = buf;
        written
    }

    /// Writes one message's CDR bytes at mission time `t_ns`.
    pub fn write_bytes(&mut self, channel: u16, t_ns: u64, data: &[u8]) -> Result<(), BagError> {
        if let Some(c) = &mut self.chunk {
            let full = c.bytes >= CHUNK_SIZE_BYTES;
            let timed = t_ns >= c.next_check_ns && {
                // One look at the wall clock per 0.1 s of mission time at most.
                c.next_check_ns = t_ns + WALL_CHECK_EVERY_NS;
                c.opened.elapsed() >= Duration::from_secs_f64(FLUSH_MIN_WALL_S)
            };
            if full || timed {
                self.flush()?;
            }
        }
        let c = self.chunk.get_or_insert_with(|| OpenChunk {
            opened: Instant::now(),
            bytes: 0,
            next_check_ns: t_ns.saturating_add(time_ns(FLUSH_EVERY_S)),
        });
        c.bytes += data.len() as u64 + MESSAGE_RECORD_BYTES;
        self.sequence = self.sequence.wrapping_add(1);
        let header = MessageHeader {
            channel_id: channel,
            sequence: self.sequence,
            log_time: t_ns,
            publish_time: t_ns,
        };
        self.writer.write_to_known_channel(&header, data).map_err(|e| self.err(e))
    }

    /// Closes the open chunk, if any, and hands it to the operating system.
    pub fn flush(&mut self) -> Result<(), BagError> {
        if self.chunk.take().is_some() {
            self.chunks += 1;
            self.writer.flush().map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Chunks closed so far.
    pub fn chunks(&self) -> u32 {
        self.chunks
    }

    /// Writes the summary (with Statistics), closes the file and renames it to its final name;
    /// gives the final path.
    pub fn finish(mut self) -> Result<PathBuf, BagError> {
        self.writer.finish().map_err(|e| self.err(e))?;
        let fin = |source| BagError::Finish { path: self.part.clone(), source };
        let mut buf = self.writer.into_inner();
        buf.flush().map_err(fin)?;
        // No fsync: the point is surviving a killed process (the data is in the operating system
        // either way), not a power cut.
        drop(buf.into_inner().map_err(|e| fin(e.into_error()))?);
        std::fs::rename(&self.part, &self.path).map_err(fin)?;
        Ok(self.path.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_yaml_is_rosbag2s_integer_form_with_default_durations() {
        let zero = "\n    sec: 0\n    nsec: 0";
        let want = format!(
            "- history: 1\n  depth: 5\n  reliability: 2\n  durability: 2\n  deadline:{zero}\n  lifespan:{zero}\n  liveliness: 1\n  liveliness_lease_duration:{zero}\n  avoid_ros_namespace_conventions: false"
        );
        assert_eq!(Qos::SENSOR.yaml(), want);
        let latched = Qos::LATCHED.yaml();
        assert!(latched.contains("depth: 1\n  reliability: 1\n  durability: 1\n"), "{latched}");
    }

    /// A bag in a temporary folder, removed on drop.
    struct TempBag(PathBuf);

    impl Drop for TempBag {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn temp_bag(name: &str) -> (TempBag, Bag, u16) {
        let dir = std::env::temp_dir().join(format!("acres-bag-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut bag = Bag::create(&dir.join("b.mcap")).unwrap();
        let ch = bag.channel::<acres_msgs::rosgraph_msgs::Clock>("/clock", Qos::reliable(1)).unwrap();
        (TempBag(dir), bag, ch)
    }

    #[test]
    fn a_fast_run_fills_chunks_to_their_size_and_a_slow_one_closes_them_each_flush_period() {
        let (_tmp, mut bag, ch) = temp_bag("rules");
        let data = vec![0u8; 1000];
        // Written at once: 40 s of mission time at 20 Hz stays in one chunk (below 4 MiB and
        // younger than the wall time a time close needs).
        for i in 0..800u64 {
            bag.write_bytes(ch, i * 50_000_000, &data).unwrap();
        }
        assert_eq!(bag.chunks(), 0);
        // Past 4 MiB the chunk is closed.
        for i in 800..5000u64 {
            bag.write_bytes(ch, i * 50_000_000, &data).unwrap();
        }
        assert_eq!(bag.chunks(), 1);
        // A chunk older than FLUSH_MIN_WALL_S is closed by the first message FLUSH_EVERY_S
        // after its first one, not before.
        bag.flush().unwrap();
        let t0 = 300_000_000_000;
        bag.write_bytes(ch, t0, &data).unwrap();
        std::thread::sleep(Duration::from_secs_f64(FLUSH_MIN_WALL_S + 0.02));
        bag.write_bytes(ch, t0 + time_ns(FLUSH_EVERY_S) - 1, &data).unwrap();
        assert_eq!(bag.chunks(), 2);
        bag.write_bytes(ch, t0 + time_ns(FLUSH_EVERY_S), &data).unwrap();
        assert_eq!(bag.chunks(), 3);
        bag.finish().unwrap();
    }

    #[test]
    fn mission_time_in_nanoseconds_rounds_and_clamps_at_zero() {
        assert_eq!(time_ns(0.05), 50_000_000);
        assert_eq!(time_ns(1075.35), 1_075_350_000_000);
        assert_eq!(time_ns(-1.0), 0);
    }
}
