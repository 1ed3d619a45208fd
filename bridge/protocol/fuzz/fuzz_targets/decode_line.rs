//! Any bytes as a line, in both directions: the decoder answers or refuses, never panics, and
//! what it reads encodes to a line that reads back to the same line (compared as lines: a NaN,
//! written `null`, is not equal to itself as a number). And the same bytes as a stream the
//! harness reads ([`read_bounded`] with a small bound, then each line decoded as the bridge's):
//! no line kept is longer than the bound, and the bytes consumed add up to the input. A `sweep`
//! line's data is unpacked in its encoding (base64, zstd, the 1 mm deltas): it gives its points
//! or an error, never a panic, and never more than its announced points. And the input's bytes
//! as a sweep's packed points (whole points of it) pack and unpack in every encoding.
#![no_main]

use acres_link_protocol::{
    decode, encode, read_bounded, BoundedLine, FromBridge, FromHarness, PackedSweep, SweepEncoding, BYTES_PER_POINT,
};
use libfuzzer_sys::fuzz_target;

/// The bound of the stream part (small, so that fuzzed inputs pass it).
const MAX: usize = 256;

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    if let Ok(m) = decode::<FromBridge>(&line) {
        if let FromBridge::Sweep(s) = &m {
            if let Ok(points) = s.unpack() {
                assert_eq!(points.len(), s.points as usize);
            }
        }
        let once = encode(&m);
        let again = decode::<FromBridge>(&once).expect("an encoded line decodes");
        assert_eq!(encode(&again), once);
    }
    if let Ok(m) = decode::<FromHarness>(&line) {
        let once = encode(&m);
        let again = decode::<FromHarness>(&once).expect("an encoded line decodes");
        assert_eq!(encode(&again), once);
    }
    let whole = &data[..data.len() / BYTES_PER_POINT * BYTES_PER_POINT];
    for e in SweepEncoding::ALL {
        let p = PackedSweep::from_le_bytes(1.0, whole, e).expect("whole points pack");
        let back = p.to_sweep().unpack().expect("a packed sweep unpacks");
        assert_eq!(back.len(), whole.len() / BYTES_PER_POINT);
        if p.encoding().lossless() {
            let bytes: Vec<u8> = back.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
            assert_eq!(bytes, whole, "{e} is lossless");
        }
    }
    let mut r = std::io::BufReader::with_capacity(7, data);
    let mut consumed = 0usize;
    loop {
        match read_bounded(&mut r, MAX, None).expect("a slice never fails") {
            BoundedLine::Line(l) => {
                assert!(l.len() <= MAX + 1, "a line of {} bytes kept", l.len());
                consumed += l.len();
                if let Ok(text) = std::str::from_utf8(&l) {
                    let _ = decode::<FromBridge>(text);
                }
            }
            BoundedLine::Oversized(n) => {
                assert!(n > MAX);
                consumed += n + usize::from(consumed + n < data.len());
            }
            BoundedLine::Cut(n) => {
                assert!(n > 0 && n <= MAX);
                consumed += n;
            }
            BoundedLine::End => break,
        }
    }
    assert_eq!(consumed, data.len());
});
