//! How `acres_msgs` values travel through ros2-client.
//!
//! ros2-client hands each sample to serde with RustDDS's CDR serializer. The `acres_msgs` types
//! have their own CDR (the one place CDR is written, golden-tested against Cyclone DDS), and their
//! serde form is JSON's (non-finite floats as `null`/`"inf"`), so they do not go through serde
//! field by field. [`Wire`] carries a message's own CDR bytes instead: it serializes the payload
//! (the bytes after the 4-byte encapsulation header) as a fixed-length tuple of bytes, which the
//! CDR serializer writes verbatim with no length and no padding; it deserializes by reading the
//! remaining bytes and decoding them with [`Message::decode`]. This is exact for a value at the
//! start of a sample (every topic), where its alignment equals the one it was encoded with.
//!
//! Inside an action's internal messages a payload does not start at offset 0 (the result follows
//! a one-byte status), so the action's goal, result and feedback travel as the plain serde
//! mirrors of [`crate::skill_action`], whose field-by-field CDR equals `acres_msgs`' (tested).
//!
//! Samples are read as little-endian CDR (what every x86/ARM DDS sends).

use std::fmt;
use std::marker::PhantomData;

use acres_msgs::Message;
use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A message that travels as its own CDR bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Wire<M>(pub M);

impl<M: Message> Serialize for Wire<M> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bytes = self.0.encode();
        let payload = &bytes[4..];
        // Whole 8-byte words first (the payload starts 8-aligned, so a u64 needs no padding;
        // ros2-client's writers are little-endian), then the tail byte by byte: one serde call
        // per word instead of per byte keeps a 230 kB cloud cheap.
        let words = payload.chunks_exact(8);
        let tail = words.remainder();
        let mut t = s.serialize_tuple(payload.len() / 8 + tail.len())?;
        for w in words {
            t.serialize_element(&u64::from_le_bytes(w.try_into().expect("8 bytes")))?;
        }
        for b in tail {
            t.serialize_element(b)?;
        }
        t.end()
    }
}

impl<'de, M: Message> Deserialize<'de> for Wire<M> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Bytes<M>(PhantomData<M>);
        impl<'de, M: Message> Visitor<'de> for Bytes<M> {
            type Value = Wire<M>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "the CDR payload of {}", M::ROS_NAME)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                // Encapsulation header of little-endian plain CDR, then every remaining byte.
                let mut bytes = vec![0u8, 1, 0, 0];
                // Words while 8 bytes remain, then bytes; the CDR deserializer reports the end of
                // its input as an error (consuming nothing): that is the end.
                while let Ok(Some(w)) = seq.next_element::<u64>() {
                    bytes.extend_from_slice(&w.to_le_bytes());
                }
                while let Ok(Some(b)) = seq.next_element::<u8>() {
                    bytes.push(b);
                }
                M::decode(&bytes).map(Wire).map_err(serde::de::Error::custom)
            }
        }
        d.deserialize_tuple(usize::MAX, Bytes(PhantomData))
    }
}

impl<M: Message + 'static> ros2_client::Message for Wire<M> {}

/// The ROS package and type name of a message (`sensor_msgs`, `PointCloud2`).
pub fn type_name<M: Message>() -> ros2_client::MessageTypeName {
    let mut parts = M::ROS_NAME.split('/');
    let pkg = parts.next().unwrap_or_default();
    let ty = parts.nth(1).unwrap_or_default();
    ros2_client::MessageTypeName::new(pkg, ty)
}
