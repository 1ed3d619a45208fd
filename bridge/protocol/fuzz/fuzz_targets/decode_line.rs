//! Any bytes as a line, in both directions: the decoder answers or refuses, never panics, and
//! what it reads encodes to a line that reads back the same.
#![no_main]

use acres_link_protocol::{decode, encode, FromBridge, FromHarness};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    if let Ok(m) = decode::<FromBridge>(&line) {
        assert_eq!(decode::<FromBridge>(&encode(&m)).ok(), Some(m));
    }
    if let Ok(m) = decode::<FromHarness>(&line) {
        assert_eq!(decode::<FromHarness>(&encode(&m)).ok(), Some(m));
    }
});
