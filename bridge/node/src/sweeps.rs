//! The newest sweep of `/lidar/points`, packed for the link as it comes ([`PackedSweep`], in the
//! encoding the harness chose: `mm_zstd` about 0.3 ms for a simulated sweep, `f32` about 0.05
//! ms for 14,400 points), in a one-sweep slot. The loop sends the slot's sweep in a `sweep` line
//! of its own as soon as the link can take one ([`crate::Conn::sweep_free`]).
//!
//! The bridge's loop packs on its own thread, at once: a hand-over to a thread of its own (as
//! an earlier version did) cost two thread wake-ups per sweep, more than the packing.
//!
//! The slot holds one sweep: a sweep that is still there when a newer one comes (the link
//! could not take it yet) is replaced by the newer one and the drop counted; so is a cloud that
//! the loop found behind a newer one in the subscription's queue.

use acres_link_protocol::{PackedSweep, SweepEncoding, BYTES_PER_POINT};
use acres_msgs::sensor_msgs::{PointCloud2, PointField};
use tracing::debug;

/// The packed sweep waiting for the link, the drops, the harness's encoding.
#[derive(Debug, Default)]
pub struct Sweeps {
    ready: Option<PackedSweep>,
    dropped: u64,
    encoding: SweepEncoding,
}

impl Sweeps {
    /// Packs the newest cloud into the slot; `skipped`: older clouds found behind it, dropped.
    pub fn put(&mut self, cloud: &PointCloud2, skipped: u64) {
        self.dropped += skipped;
        match pack(cloud, self.encoding) {
            Some(p) => {
                if self.ready.replace(p).is_some() {
                    self.dropped += 1;
                }
            }
            None => debug!("sweep skipped: the cloud is not x, y, z float32 points"),
        }
    }

    /// Takes the packed sweep waiting in the slot, if one does.
    pub fn take(&mut self) -> Option<PackedSweep> {
        self.ready.take()
    }

    /// Sweeps dropped since the last [`Sweeps::reset`].
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// True when a packed sweep waits.
    pub fn waiting(&self) -> bool {
        self.ready.is_some()
    }

    /// A new harness, which wants its sweeps in `encoding`: the slot is emptied and the drops
    /// count from 0.
    pub fn reset(&mut self, encoding: SweepEncoding) {
        self.ready = None;
        self.dropped = 0;
        self.encoding = encoding;
    }
}

/// The sweep of a cloud in `encoding`, stamped with the cloud's stamp: from its bytes as they
/// are when the cloud has the link's layout (one row of x, y, z, intensity little-endian
/// float32 at offsets 0, 4, 8, 12, 16 bytes a point), else from its points read field by field.
pub fn pack(pc: &PointCloud2, encoding: SweepEncoding) -> Option<PackedSweep> {
    let t_s = pc.header.stamp.as_secs_f64();
    match link_layout(pc) {
        Some(bytes) => PackedSweep::from_le_bytes(t_s, bytes, encoding),
        None => acres_ros::cloud::from_cloud(pc)
            .ok()
            .and_then(|pts| PackedSweep::from_le_bytes(t_s, &acres_link_protocol::le_bytes(&pts), encoding)),
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
        for e in SweepEncoding::ALL {
            let packed = pack(&cloud, e).unwrap();
            assert_eq!(packed.to_sweep(), acres_link_protocol::Sweep::pack(3.5, &pts, e));
        }
        // Another layout (x, y, z only, 12 bytes a point): read field by field, intensity 0.
        let mut xyz = cloud.clone();
        xyz.fields.truncate(3);
        xyz.point_step = 12;
        xyz.row_step = 12 * 50;
        xyz.data = pts.iter().flat_map(|p| p[..3].iter().flat_map(|v| v.to_le_bytes())).collect();
        assert!(link_layout(&xyz).is_none());
        let back = pack(&xyz, SweepEncoding::F32).unwrap().to_sweep().unpack().unwrap();
        assert_eq!(back, pts.iter().map(|p| [p[0], p[1], p[2], 0.0]).collect::<Vec<_>>());
    }

    #[test]
    fn the_slot_keeps_the_newest_sweep_and_counts_every_one_it_replaces_or_skips() {
        let cloud = |t: i32| {
            let h = Header {
                stamp: acres_msgs::builtin_interfaces::Time { sec: t, nanosec: 0 },
                ..Default::default()
            };
            acres_ros::cloud::to_cloud(h, &[[1.0, 2.0, 3.0, 0.5]])
        };
        let mut s = Sweeps::default();
        s.reset(SweepEncoding::MmZstd);
        s.put(&cloud(1), 0);
        assert!(s.waiting());
        s.put(&cloud(2), 2);
        assert_eq!(s.dropped(), 3, "sweep 1 replaced, two skipped in the queue");
        assert_eq!(s.take().map(|p| p.to_sweep().t_s), Some(2.0));
        assert!(s.take().is_none());
        s.put(&cloud(3), 0);
        s.reset(SweepEncoding::F32);
        assert!(s.take().is_none() && !s.waiting());
        assert_eq!(s.dropped(), 0);
    }
}
