//! One rosbag2-compatible MCAP file: profile `ros2`, one `ros2msg` schema per message type (the
//! full text with dependencies from `acres_msgs`), channels with message encoding `cdr` and the
//! `offered_qos_profiles` metadata, zstd chunks, a summary with Statistics.
//!
//! The file is written as `<name>.part` and renamed to `<name>` by [`Bag::finish`]. Chunks are
//! closed and written through to the operating system at least every [`FLUSH_EVERY_S`] of
//! mission time (and whenever a chunk reaches [`CHUNK_SIZE_BYTES`] before compression), so a
//! process killed mid-run leaves a `.part` file whose every complete chunk a reader can recover:
//! at most the last [`FLUSH_EVERY_S`] of mission time is lost.
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

use acres_msgs::Message;
use mcap::records::MessageHeader;

/// Mission time between two forced chunk flushes, s.
pub const FLUSH_EVERY_S: f64 = 2.0;

/// The largest chunk before compression, bytes (a chunk is closed when it grows past this).
pub const CHUNK_SIZE_BYTES: u64 = 4 * 1024 * 1024;

/// The zstd level of the chunks (1: the fastest; the point clouds compress well at it).
pub const ZSTD_LEVEL: u32 = 1;

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

/// One MCAP file being written.
pub struct Bag {
    writer: mcap::Writer<BufWriter<File>>,
    part: PathBuf,
    path: PathBuf,
    schemas: HashMap<&'static str, u16>,
    channels: BTreeMap<String, u16>,
    sequence: u32,
    next_flush_ns: u64,
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
            .compression_level(ZSTD_LEVEL)
            .compression_threads(0)
            .chunk_size(Some(CHUNK_SIZE_BYTES))
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
            next_flush_ns: time_ns(FLUSH_EVERY_S),
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
        self.write_bytes(channel, t_ns, &msg.encode())
    }

    /// Writes one message's CDR bytes at mission time `t_ns`.
    pub fn write_bytes(&mut self, channel: u16, t_ns: u64, data: &[u8]) -> Result<(), BagError> {
        if t_ns >= self.next_flush_ns {
            self.writer.flush().map_err(|e| self.err(e))?;
            while self.next_flush_ns <= t_ns {
                self.next_flush_ns += time_ns(FLUSH_EVERY_S);
            }
        }
        self.sequence = self.sequence.wrapping_add(1);
        let header = MessageHeader {
            channel_id: channel,
            sequence: self.sequence,
            log_time: t_ns,
            publish_time: t_ns,
        };
        self.writer.write_to_known_channel(&header, data).map_err(|e| self.err(e))
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

    #[test]
    fn mission_time_in_nanoseconds_rounds_and_clamps_at_zero() {
        assert_eq!(time_ns(0.05), 50_000_000);
        assert_eq!(time_ns(1075.35), 1_075_350_000_000);
        assert_eq!(time_ns(-1.0), 0);
    }
}
