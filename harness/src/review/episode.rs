//! The World pane's objects and LiDAR returns from the run's episode recording
//! (`episode.mcap`, or `episode.mcap.part` while the run goes on), read with the `mcap` crate
//! and decoded with `acres_msgs`' CDR.
//!
//! - **Objects**: each `/acres/objects` marker array (1 Hz, simulator truth): every `CUBE` of
//!   the namespace `objects` is a box (centre, heading, length, width), its kind the text of the
//!   `object_labels` marker of the same id.
//! - **LiDAR returns**: one `/scan` in [`RETURNS_EVERY_S`] of mission time, each finite range
//!   placed on the map from the vehicle's `/odom` pose of the same step and the LiDAR's mount
//!   (`/tf_static`, `base_link` → `lidar`). A recording without `/scan` gives its
//!   `/lidar/points` clouds to the vehicle's scan function (`acres_vehicle::scan`, the one scan
//!   function), which keeps the returns between 0.3 m above the ground and 0.5 m above the
//!   sensor, as `/scan` holds them.
//!
//! A `.part` file (a run in progress, or a killed one) is read up to its last complete chunk.

use acres_vehicle::scan::ScanConfig;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use mcap::read::{Options, RawMessageStream};
use serde::Serialize;

use acres_farm::geom::Pose;
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::sensor_msgs::{LaserScan, PointCloud2};
use acres_msgs::tf2_msgs::TFMessage;
use acres_msgs::visualization_msgs::{Marker, MarkerArray};
use acres_msgs::Message;

use super::source::Xy;
use crate::runfolder::recording::EPISODE_FILE;

/// Mission time between two scans kept for the World pane, s (the recording has 10 a second).
pub const RETURNS_EVERY_S: f64 = 0.5;

/// The objects at one time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectsAt {
    /// Mission time, s.
    pub t_s: f64,
    /// The objects.
    pub objects: Vec<ObjectBox>,
}

/// One object's box on the map.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectBox {
    /// The object's id.
    pub id: i32,
    /// Its kind (`truck`, `person`, `tractor`, `car`; empty when the recording has no label).
    pub kind: String,
    /// The centre, m.
    pub at: Xy,
    /// The heading of the long side, rad.
    pub yaw_rad: f64,
    /// The length, m.
    pub length_m: f64,
    /// The width, m.
    pub width_m: f64,
}

/// The LiDAR returns of one scan, on the map.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReturnsAt {
    /// Mission time, s.
    pub t_s: f64,
    /// The returns, m (rounded to the centimetre).
    pub points: Vec<Xy>,
}

/// What the World pane takes from an episode recording.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EpisodeWorld {
    /// The file read (`episode.mcap` or `episode.mcap.part`).
    pub file: String,
    /// Whether it is finished (not a `.part` file).
    pub finished: bool,
    /// The topic the returns came from (`/scan`, `/lidar/points`, or empty: none).
    pub returns_from: String,
    /// The objects over time.
    pub objects: Vec<ObjectsAt>,
    /// The returns over time.
    pub returns: Vec<ReturnsAt>,
}

/// The run's episode recording: `episode.mcap`, else `episode.mcap.part` (a run going on).
pub fn episode_file(folder: &Path) -> Option<PathBuf> {
    let done = folder.join(EPISODE_FILE);
    if done.is_file() {
        return Some(done);
    }
    let part = folder.join(format!("{EPISODE_FILE}.part"));
    part.is_file().then_some(part)
}

/// Recordings read so far, by file, kept while the file's length and time are the same (the
/// viewer reads a run again at each request; a finished recording is decoded once).
#[derive(Debug, Default)]
pub struct Cache {
    read: Mutex<HashMap<PathBuf, Cached>>,
}

/// A recording read: the file's length and time then, and what it gave.
type Cached = (u64, Option<SystemTime>, Arc<EpisodeWorld>);

impl Cache {
    /// The recording at `path`, read now or before.
    pub fn get(&self, path: &Path) -> Result<Arc<EpisodeWorld>, String> {
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let key = (meta.len(), meta.modified().ok());
        if let Some((len, time, w)) = self.read.lock().ok().and_then(|m| m.get(path).cloned()) {
            if (len, time) == key {
                return Ok(w);
            }
        }
        let w = Arc::new(read(path)?);
        if let Ok(mut m) = self.read.lock() {
            // A run going on keeps one entry: its .part file is gone once it is renamed.
            m.retain(|p, _| p.exists());
            m.insert(path.to_path_buf(), (key.0, key.1, Arc::clone(&w)));
        }
        Ok(w)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Topic {
    Odom,
    Scan,
    Points,
    Objects,
    TfStatic,
    Other,
}

impl Topic {
    fn of(topic: &str) -> Topic {
        match topic {
            "/odom" => Topic::Odom,
            "/scan" => Topic::Scan,
            "/lidar/points" => Topic::Points,
            "/acres/objects" => Topic::Objects,
            "/tf_static" => Topic::TfStatic,
            _ => Topic::Other,
        }
    }
}

fn cm(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn secs(t_ns: u64) -> f64 {
    t_ns as f64 * 1e-9
}

/// Reads the objects and returns of the recording at `path`.
pub fn read(path: &Path) -> Result<EpisodeWorld, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut stream = RawMessageStream::new_with_options(&bytes, Options::IgnoreEndMagic.into())
        .map_err(|e| format!("{}: not an MCAP file: {e}", path.display()))?;
    let mut out = EpisodeWorld {
        file: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        finished: path.extension().is_none_or(|e| e != "part"),
        ..EpisodeWorld::default()
    };
    let mut topics: HashMap<u16, Topic> = HashMap::new();
    let mut returns = Returns::new();
    // The end, or a .part file's chunk being written (an error): what came before stands.
    while let Some(Ok(m)) = stream.next() {
        let id = m.header.channel_id;
        let topic = *topics
            .entry(id)
            .or_insert_with(|| stream.get_channel(id).map_or(Topic::Other, |c| Topic::of(&c.topic)));
        let t_ns = m.header.log_time;
        match topic {
            Topic::Odom => {
                returns.odom.0 = t_ns;
                returns.odom.1.clear();
                returns.odom.1.extend_from_slice(&m.data);
            }
            Topic::TfStatic => returns.mount_from(&m.data),
            Topic::Objects => {
                if let Ok(a) = MarkerArray::decode(&m.data) {
                    out.objects.push(ObjectsAt { t_s: secs(t_ns), objects: boxes(&a) });
                }
            }
            Topic::Scan | Topic::Points => returns.add(topic, t_ns, &m.data, &mut out),
            _ => {}
        }
    }
    Ok(out)
}

/// What turns the recording's scans (or clouds) into returns placed on the map.
struct Returns {
    /// The LiDAR's mount ahead of base_link, m (the default until /tf_static says).
    mount: [f64; 2],
    /// Its height above ground: the scan of a cloud keeps points from 0.3 m above ground.
    scan_cfg: ScanConfig,
    /// The latest /odom: its time and bytes (decoded only for a scan kept).
    odom: (u64, Vec<u8>),
    next_return_ns: u64,
    /// Whether the recording has /scan (then its clouds are not read).
    have_scan: bool,
}

impl Returns {
    fn new() -> Returns {
        let lidar = acres_core::lidar::LidarConfig::default();
        Returns {
            mount: [lidar.mount_forward_m, 0.0],
            scan_cfg: ScanConfig::for_mount(lidar.mount_height_m),
            odom: (u64::MAX, Vec::new()),
            next_return_ns: 0,
            have_scan: false,
        }
    }

    /// The LiDAR's mount from a /tf_static message.
    fn mount_from(&mut self, data: &[u8]) {
        if let Ok(tf) = TFMessage::decode(data) {
            if let Some(l) = tf.transforms.iter().find(|t| t.child_frame_id == "lidar") {
                self.mount = [l.transform.translation.x, l.transform.translation.y];
                self.scan_cfg = ScanConfig::for_mount(l.transform.translation.z);
            }
        }
    }

    /// A /scan or /lidar/points message: its returns, at most one set every `RETURNS_EVERY_S`,
    /// placed by the /odom of the same instant.
    fn add(&mut self, topic: Topic, t_ns: u64, data: &[u8], out: &mut EpisodeWorld) {
        if t_ns < self.next_return_ns || (topic == Topic::Points && self.have_scan) {
            return;
        }
        let ranges = match topic {
            Topic::Scan => {
                self.have_scan = true;
                LaserScan::decode(data).ok().map(|s| scan_ranges(&s))
            }
            _ => PointCloud2::decode(data).ok().map(|c| cloud_ranges(&c, &self.scan_cfg)),
        };
        let pose =
            (self.odom.0 == t_ns).then(|| Odometry::decode(&self.odom.1).ok()).flatten().map(|o| Pose {
                x: o.pose.pose.position.x,
                y: o.pose.pose.position.y,
                yaw: o.pose.pose.orientation.yaw_rad(),
            });
        if let (Some(ranges), Some(pose)) = (ranges, pose) {
            out.returns.push(ReturnsAt { t_s: secs(t_ns), points: place(&ranges, pose, self.mount) });
            out.returns_from = if self.have_scan { "/scan" } else { "/lidar/points" }.into();
            let step_ns = (RETURNS_EVERY_S * 1e9) as u64;
            self.next_return_ns = (t_ns / step_ns + 1) * step_ns;
        }
    }
}

/// The boxes of an objects marker array.
fn boxes(a: &MarkerArray) -> Vec<ObjectBox> {
    let label = |id: i32| {
        a.markers
            .iter()
            .find(|m| m.ns == "object_labels" && m.id == id && m.r#type == Marker::TEXT_VIEW_FACING)
            .map(|m| m.text.clone())
            .unwrap_or_default()
    };
    a.markers
        .iter()
        .filter(|m| m.ns == "objects" && m.r#type == Marker::CUBE && m.action == Marker::ADD)
        .map(|m| ObjectBox {
            id: m.id,
            kind: label(m.id),
            at: [cm(m.pose.position.x), cm(m.pose.position.y)],
            yaw_rad: m.pose.orientation.yaw_rad(),
            length_m: m.scale.x,
            width_m: m.scale.y,
        })
        .collect()
}

/// A laser scan's ranges with their bearings in the LiDAR's frame, rad (finite ranges within
/// the scan's limits only).
fn scan_ranges(s: &LaserScan) -> Vec<(f32, f32)> {
    s.ranges
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_finite() && **r >= s.range_min && **r <= s.range_max)
        .map(|(i, r)| (s.angle_min + i as f32 * s.angle_increment, *r))
        .collect()
}

/// A cloud through the scan function (`cfg`: the recorded mount's): its bins' bearings and
/// ranges (finite only).
fn cloud_ranges(c: &PointCloud2, cfg: &ScanConfig) -> Vec<(f32, f32)> {
    let offset = |name: &str| c.fields.iter().find(|f| f.name == name).map(|f| f.offset as usize);
    let (Some(ox), Some(oy), Some(oz)) = (offset("x"), offset("y"), offset("z")) else {
        return Vec::new();
    };
    let step = c.point_step as usize;
    if step == 0 || c.is_bigendian {
        return Vec::new();
    }
    let f = |p: &[u8], o: usize| {
        p.get(o..o + 4).map_or(f32::NAN, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let points: Vec<[f32; 4]> =
        c.data.chunks_exact(step).map(|p| [f(p, ox), f(p, oy), f(p, oz), 0.0]).collect();
    let scan = acres_vehicle::scan::scan(&points, cfg);
    scan.ranges_m
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_finite())
        .map(|(i, r)| ((i as f32).to_radians(), *r))
        .collect()
}

/// Bearings and ranges in the LiDAR's frame, placed on the map from the vehicle's pose and the
/// LiDAR's mount.
fn place(ranges: &[(f32, f32)], pose: Pose, mount: [f64; 2]) -> Vec<Xy> {
    let (s, c) = pose.yaw.sin_cos();
    ranges
        .iter()
        .map(|&(a, r)| {
            let (a, r) = (f64::from(a), f64::from(r));
            let (lx, ly) = (mount[0] + r * a.cos(), mount[1] + r * a.sin());
            [cm(pose.x + c * lx - s * ly), cm(pose.y + s * lx + c * ly)]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_return_ahead_of_a_vehicle_heading_north_lies_north_of_its_lidar() {
        let pose = Pose { x: 10.0, y: 20.0, yaw: std::f64::consts::FRAC_PI_2 };
        let p = place(&[(0.0, 5.0), (std::f32::consts::FRAC_PI_2, 2.0)], pose, [1.0, 0.0]);
        assert_eq!(p[0], [10.0, 26.0]);
        // 90° left of the heading: west.
        assert_eq!(p[1], [8.0, 21.0]);
    }
}
