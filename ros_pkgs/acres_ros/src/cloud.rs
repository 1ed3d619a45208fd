//! `sensor_msgs/PointCloud2` of LiDAR sweeps: x, y, z, intensity as little-endian float32
//! (point step 16 bytes, one row), and back.

use acres_msgs::sensor_msgs::{PointCloud2, PointField};
use acres_msgs::std_msgs::Header;

/// Bytes per point.
pub const POINT_STEP: u32 = 16;

/// The cloud of `points` (`[x, y, z, intensity]`, metres in the sensor frame).
pub fn to_cloud(header: Header, points: &[[f32; 4]]) -> PointCloud2 {
    let field = |name: &str, offset: u32| PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32,
        count: 1,
    };
    let mut data = Vec::with_capacity(points.len() * POINT_STEP as usize);
    for p in points {
        for v in p {
            data.extend_from_slice(&v.to_le_bytes());
        }
    }
    PointCloud2 {
        header,
        height: 1,
        width: points.len() as u32,
        fields: vec![field("x", 0), field("y", 4), field("z", 8), field("intensity", 12)],
        is_bigendian: false,
        point_step: POINT_STEP,
        row_step: POINT_STEP * points.len() as u32,
        data,
        is_dense: true,
    }
}

/// Why a cloud cannot be read as x, y, z[, intensity] float32.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CloudError {
    /// A field is missing or not float32.
    #[error("PointCloud2: field {0} missing or not float32")]
    Field(&'static str),
    /// The data is shorter than width × height × point_step, or big-endian.
    #[error("PointCloud2: bad layout ({0})")]
    Layout(String),
}

/// The points of a cloud with float32 fields x, y, z (and intensity, else 0), in any layout.
pub fn from_cloud(c: &PointCloud2) -> Result<Vec<[f32; 4]>, CloudError> {
    let off = |name: &'static str| {
        c.fields
            .iter()
            .find(|f| f.name == name && f.datatype == PointField::FLOAT32)
            .map(|f| f.offset as usize)
            .ok_or(CloudError::Field(name))
    };
    let (x, y, z) = (off("x")?, off("y")?, off("z")?);
    let i = off("intensity").ok();
    if c.is_bigendian {
        return Err(CloudError::Layout("big-endian".into()));
    }
    let n = c.width as usize * c.height as usize;
    let step = c.point_step as usize;
    let need = n.saturating_sub(1) * step + [x, y, z, i.unwrap_or(0)].into_iter().max().unwrap_or(0) + 4;
    if n > 0
        && (c.data.len() < need
            || (c.height > 1
                && c.row_step as usize * (c.height as usize - 1) + c.width as usize * step > c.data.len()))
    {
        return Err(CloudError::Layout(format!("{} bytes for {n} points of {step}", c.data.len())));
    }
    let rd = |at: usize| f32::from_le_bytes([c.data[at], c.data[at + 1], c.data[at + 2], c.data[at + 3]]);
    if (x, y, z, i, step, c.height) == (0, 4, 8, Some(12), POINT_STEP as usize, 1) {
        // The layout `to_cloud` writes (and most drivers'): one pass over 16-byte points.
        let f = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        return Ok(c.data[..n * step]
            .chunks_exact(16)
            .map(|p| [f(&p[0..4]), f(&p[4..8]), f(&p[8..12]), f(&p[12..16])])
            .collect());
    }
    let mut out = Vec::with_capacity(n);
    for row in 0..c.height as usize {
        for col in 0..c.width as usize {
            let b = row * c.row_step as usize + col * step;
            out.push([rd(b + x), rd(b + y), rd(b + z), i.map_or(0.0, |i| rd(b + i))]);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cloud_reads_back_its_points() {
        let pts = vec![[1.0, -2.0, 0.5, 0.25], [40.0, 0.0, -2.2, 1.0]];
        let c = to_cloud(Header::default(), &pts);
        assert_eq!(c.data.len(), 32);
        assert_eq!(from_cloud(&c).unwrap(), pts);
        // Another driver's layout: intensity first, 20-byte points, two rows.
        let field = |name: &str, offset: u32| PointField {
            name: name.into(),
            offset,
            datatype: PointField::FLOAT32,
            count: 1,
        };
        let mut data = Vec::new();
        for p in &pts {
            for v in [p[3], p[0], p[1], p[2], 9.0] {
                data.extend_from_slice(&v.to_le_bytes());
            }
        }
        let other = PointCloud2 {
            height: 2,
            width: 1,
            fields: vec![field("intensity", 0), field("x", 4), field("y", 8), field("z", 12)],
            point_step: 20,
            row_step: 20,
            data,
            ..c.clone()
        };
        assert_eq!(from_cloud(&other).unwrap(), pts);
        let mut short = c.clone();
        short.data.truncate(20);
        assert!(from_cloud(&short).is_err());
    }
}
