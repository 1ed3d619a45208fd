//! The sweep thread (`link-sweep`): the bridge's loop hands it each cloud it takes from
//! `/lidar/points` (a move, no copy); the thread packs it for the link ([`PackedSweep`]: base64
//! straight from the cloud's bytes when they are the link's layout, x, y, z, intensity as
//! little-endian `f32`, 16 bytes a point) and leaves it in a one-sweep slot. The loop never packs
//! or encodes a sweep: a step takes the packed sweep out of the slot and copies its text into
//! the line.
//!
//! The slot holds one sweep: a sweep that is still there when a newer one is packed (no step
//! could carry it at once) is replaced by the newer one and the drop counted; so is a cloud that
//! still waits to be packed when the next one is handed over.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use acres_link_protocol::{PackedSweep, BYTES_PER_POINT};
use acres_msgs::sensor_msgs::{PointCloud2, PointField};
use tracing::debug;

#[derive(Default)]
struct Slot {
    /// A cloud handed over and not taken by the thread yet.
    cloud: Option<PointCloud2>,
    /// A cloud is handed over and not packed yet.
    packing: bool,
    /// The packed sweep waiting for a step.
    ready: Option<PackedSweep>,
    /// Sweeps replaced before they could go.
    dropped: u64,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    slot: Mutex<Slot>,
    wake: Condvar,
}

/// The sweep thread and its slot.
pub struct Sweeps {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Sweeps {
    /// Starts the thread.
    pub fn start() -> std::io::Result<Sweeps> {
        let shared = Arc::new(Shared::default());
        let sh = shared.clone();
        let thread = std::thread::Builder::new().name("link-sweep".into()).spawn(move || run(&sh))?;
        Ok(Sweeps { shared, thread: Some(thread) })
    }

    fn slot(&self) -> MutexGuard<'_, Slot> {
        self.shared.slot.lock().expect("sweep slot lock")
    }

    /// Hands a cloud over to be packed.
    pub fn hand(&self, cloud: PointCloud2) {
        let mut s = self.slot();
        if s.cloud.replace(cloud).is_some() {
            s.dropped += 1;
        }
        s.packing = true;
        self.shared.wake.notify_one();
    }

    /// Takes the packed sweep waiting in the slot, if one does.
    pub fn take(&self) -> Option<PackedSweep> {
        self.slot().ready.take()
    }

    /// True while a cloud handed over is not packed yet.
    pub fn packing(&self) -> bool {
        self.slot().packing
    }

    /// True when a packed sweep waits in the slot.
    pub fn ready(&self) -> bool {
        self.slot().ready.is_some()
    }

    /// Sweeps dropped since the last [`Sweeps::reset`].
    pub fn dropped(&self) -> u64 {
        self.slot().dropped
    }

    /// A new harness: the slot is emptied and the drops count from 0.
    pub fn reset(&self) {
        let mut s = self.slot();
        s.ready = None;
        s.dropped = 0;
    }
}

impl Drop for Sweeps {
    fn drop(&mut self) {
        self.slot().stop = true;
        self.shared.wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(sh: &Shared) {
    loop {
        let pc = {
            let mut s = sh.slot.lock().expect("sweep slot lock");
            loop {
                if s.stop {
                    return;
                }
                if let Some(pc) = s.cloud.take() {
                    break pc;
                }
                s = sh.wake.wait(s).expect("sweep slot lock");
            }
        };
        let packed = pack(&pc);
        drop(pc);
        let mut s = sh.slot.lock().expect("sweep slot lock");
        s.packing = s.cloud.is_some();
        match packed {
            Some(p) => {
                if s.ready.replace(p).is_some() {
                    s.dropped += 1;
                }
            }
            None => debug!("sweep skipped: the cloud is not x, y, z float32 points"),
        }
    }
}

/// The sweep of a cloud: its bytes as they are when the cloud has the link's layout (one row
/// of x, y, z, intensity little-endian float32 at offsets 0, 4, 8, 12, 16 bytes a point), else
/// its points read field by field.
pub fn pack(pc: &PointCloud2) -> Option<PackedSweep> {
    let t_s = pc.header.stamp.as_secs_f64();
    match link_layout(pc) {
        Some(bytes) => PackedSweep::from_le_bytes(t_s, bytes),
        None => acres_ros::cloud::from_cloud(pc).ok().map(|pts| PackedSweep::pack(t_s, &pts)),
    }
}

/// The cloud's data when it is exactly the link's layout.
fn link_layout(pc: &PointCloud2) -> Option<&[u8]> {
    let want = [("x", 0), ("y", 4), ("z", 8), ("intensity", 12)];
    let fields_ok = pc.fields.len() == want.len()
        && pc.fields.iter().zip(want).all(|(f, (name, offset))| {
            f.name == name && f.offset == offset && f.datatype == PointField::FLOAT32 && f.count == 1
        });
    let n = pc.width as usize * pc.height as usize;
    let ok = fields_ok
        && !pc.is_bigendian
        && pc.point_step as usize == BYTES_PER_POINT
        && (pc.height <= 1 || pc.row_step as usize == pc.width as usize * BYTES_PER_POINT);
    (ok && pc.data.len() >= n * BYTES_PER_POINT).then(|| &pc.data[..n * BYTES_PER_POINT])
}

#[cfg(test)]
mod tests {
    use super::*;
    use acres_msgs::std_msgs::Header;

    #[test]
    fn a_cloud_of_the_link_layout_packs_as_its_points_do_and_others_by_field() {
        let pts: Vec<[f32; 4]> = (0..50).map(|i| [i as f32, -0.5 * i as f32, 1.25, 0.75]).collect();
        let h = Header {
            stamp: acres_msgs::builtin_interfaces::Time { sec: 3, nanosec: 500_000_000 },
            ..Default::default()
        };
        let cloud = acres_ros::cloud::to_cloud(h.clone(), &pts);
        assert!(link_layout(&cloud).is_some());
        let packed = pack(&cloud).unwrap();
        assert_eq!(packed.to_sweep(), acres_link_protocol::Sweep::pack(3.5, &pts));
        // Another layout (x, y, z only, 12 bytes a point): read field by field, intensity 0.
        let mut xyz = cloud.clone();
        xyz.fields.truncate(3);
        xyz.point_step = 12;
        xyz.row_step = 12 * 50;
        xyz.data = pts.iter().flat_map(|p| p[..3].iter().flat_map(|v| v.to_le_bytes())).collect();
        assert!(link_layout(&xyz).is_none());
        let back = pack(&xyz).unwrap().to_sweep().unpack().unwrap();
        assert_eq!(back, pts.iter().map(|p| [p[0], p[1], p[2], 0.0]).collect::<Vec<_>>());
    }
}
