//! Any bytes as a line, in both directions: the decoder answers or refuses, never panics, and
//! what it reads encodes to a line that reads back to the same line (compared as lines: a NaN,
//! written `null`, is not equal to itself as a number).
#![no_main]

use acres_link_protocol::{decode, encode, FromBridge, FromHarness};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    if let Ok(m) = decode::<FromBridge>(&line) {
        let once = encode(&m);
        let again = decode::<FromBridge>(&once).expect("an encoded line decodes");
        assert_eq!(encode(&again), once);
    }
    if let Ok(m) = decode::<FromHarness>(&line) {
        let once = encode(&m);
        let again = decode::<FromHarness>(&once).expect("an encoded line decodes");
        assert_eq!(encode(&again), once);
    }
});
