//! The attach's challenge–response: the token never travels, in clear or not.
//!
//! The bridge's `hello` carries a fresh nonce ([`new_nonce`], 32 random bytes, hex); the
//! harness's `attach` carries its own fresh nonce and [`attach_proof`]: HMAC-SHA256 keyed by
//! the token over a label, both nonces and the TLS channel's binding (an exporter of the TLS
//! session, empty on a plaintext link). The bridge checks it ([`proof_matches`], constant time)
//! and answers `welcome` with [`welcome_proof`] (the same over another label), which the harness
//! checks: each side proves it knows the token to the other. A recorded attach is useless on
//! another connection (the bridge's nonce differs), and the bridge also refuses a harness nonce
//! it has seen before (a replay).

use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

/// Bytes of a nonce (64 hex characters on the wire).
pub const NONCE_BYTES: usize = 32;

/// The label of the TLS exporter that binds the proofs to the TLS session.
pub const EXPORTER_LABEL: &[u8] = b"EXPORTER-acres-link-attach";

/// Bytes of the channel binding taken from the TLS exporter.
pub const CHANNEL_BINDING_BYTES: usize = 32;

/// A fresh random nonce, hex.
pub fn new_nonce() -> String {
    let mut b = [0u8; NONCE_BYTES];
    SystemRandom::new().fill(&mut b).expect("the system's random source");
    hex(&b)
}

/// Lowercase hex of bytes.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Bytes of hex (either case); `None` when it is not hex.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

fn message(label: &str, bridge_nonce: &str, harness_nonce: &str, channel: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(160);
    for part in [label.as_bytes(), bridge_nonce.as_bytes(), harness_nonce.as_bytes(), channel] {
        m.extend_from_slice(&(part.len() as u32).to_be_bytes());
        m.extend_from_slice(part);
    }
    m
}

const ATTACH_LABEL: &str = "acres-link v3 attach";
const WELCOME_LABEL: &str = "acres-link v3 welcome";

fn tag(token: &str, msg: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, token.as_bytes());
    hex(hmac::sign(&key, msg).as_ref())
}

fn verify(token: &str, msg: &[u8], given_hex: &str) -> bool {
    let key = hmac::Key::new(hmac::HMAC_SHA256, token.as_bytes());
    unhex(given_hex).is_some_and(|g| hmac::verify(&key, msg, &g).is_ok()) && !token.is_empty()
}

/// The harness's proof in `attach`.
pub fn attach_proof(token: &str, bridge_nonce: &str, harness_nonce: &str, channel: &[u8]) -> String {
    tag(token, &message(ATTACH_LABEL, bridge_nonce, harness_nonce, channel))
}

/// The bridge's proof in `welcome`.
pub fn welcome_proof(token: &str, bridge_nonce: &str, harness_nonce: &str, channel: &[u8]) -> String {
    tag(token, &message(WELCOME_LABEL, bridge_nonce, harness_nonce, channel))
}

/// Whether `given` is the attach proof of `token` for these nonces (constant time).
pub fn attach_proof_matches(
    given: &str,
    token: &str,
    bridge_nonce: &str,
    harness_nonce: &str,
    channel: &[u8],
) -> bool {
    verify(token, &message(ATTACH_LABEL, bridge_nonce, harness_nonce, channel), given)
}

/// Whether `given` is the welcome proof of `token` for these nonces (constant time).
pub fn welcome_proof_matches(
    given: &str,
    token: &str,
    bridge_nonce: &str,
    harness_nonce: &str,
    channel: &[u8],
) -> bool {
    verify(token, &message(WELCOME_LABEL, bridge_nonce, harness_nonce, channel), given)
}

/// Whether a nonce is well formed (64 hex characters).
pub fn nonce_ok(n: &str) -> bool {
    n.len() == 2 * NONCE_BYTES && unhex(n).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_holds_only_for_its_token_nonces_channel_and_direction() {
        let (b, h) = (new_nonce(), new_nonce());
        assert!(nonce_ok(&b) && nonce_ok(&h) && b != h, "fresh nonces differ");
        let p = attach_proof("s3cret", &b, &h, b"chan");
        assert!(attach_proof_matches(&p, "s3cret", &b, &h, b"chan"));
        assert!(!attach_proof_matches(&p, "s3creT", &b, &h, b"chan"), "another token");
        assert!(!attach_proof_matches(&p, "s3cret", &new_nonce(), &h, b"chan"), "another bridge nonce");
        assert!(!attach_proof_matches(&p, "s3cret", &b, &new_nonce(), b"chan"), "another harness nonce");
        assert!(!attach_proof_matches(&p, "s3cret", &b, &h, b"other"), "another TLS session");
        assert!(!welcome_proof_matches(&p, "s3cret", &b, &h, b"chan"), "the attach proof is no welcome");
        assert!(welcome_proof_matches(&welcome_proof("s3cret", &b, &h, b""), "s3cret", &b, &h, b""));
        assert!(!attach_proof_matches("zz", "s3cret", &b, &h, b"chan"), "not hex");
        assert!(!attach_proof_matches(&attach_proof("", &b, &h, b""), "", &b, &h, b""), "no empty token");
        assert!(!p.contains("s3cret"));
    }

    /// The example of docs/link-protocol.md, computed there by an independent implementation
    /// (Python's hmac): the framing is what the document says.
    #[test]
    fn the_documented_example_is_a_real_proof() {
        let b = "5b1e0c9d2a7f4e3b8c6d1a0f9e2b7c4d3a5f6e1b0c9d8a7b2e4f1c3d5a6b7c8d";
        let h = "e2c4a6b8d0f1e3c5a7b9d1f3e5c7a9b1d3f5e7c9a1b3d5f7e9c1a3b5d7f9e1c3";
        assert_eq!(
            attach_proof("a-shared-secret", b, h, b""),
            "3e0b43624d76631ebcea6732b55c741dd9c1c56b3de099a3c371f19b69dd1e3c"
        );
        assert_eq!(
            welcome_proof("a-shared-secret", b, h, b""),
            "1dafd9e56623d2ed95019da616c48163ea03316e39bbf650e8c53f04215a0419"
        );
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(unhex(&hex(&[0, 1, 254, 255])), Some(vec![0, 1, 254, 255]));
        assert_eq!(unhex("0A"), Some(vec![10]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
    }
}
