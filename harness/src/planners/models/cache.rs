//! The model-call cache (`--cache DIR` on `run` and `sweep`; off by default): a reply stored
//! under a key of the request and the serving stack, and replayed — the reply and its recorded
//! latency, so the mission clock runs the same — when the same request is made again. A
//! replayed reply is marked `cached` in its `model_reply` row; its tokens and cost are those it
//! had when it was made.
//!
//! The key is the SHA-256 (hex) of one canonical JSON text (object keys sorted, no spaces):
//! `{"body": BODY, "format": 1, "run_seed": SEED, "stack": {"base_url", "model", "provider"}}`,
//! where BODY is the request body as sent, the stack is the model file's provider, server
//! address and model identifier, and SEED the run's seed (also where the provider takes none,
//! so that repeats stay apart). `acres-harness models cache-key` prints a key and its parts.
//!
//! An entry is `DIR/<first two hex digits>/<key>.json` ([`Stored`]), written to a temporary file
//! and renamed, so workers and shards may share a folder. An entry that cannot be read or parsed
//! is a miss (the call goes to the server and the entry is written again).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::config::ModelConfig;

/// The key's format: a change of what goes into a key changes it.
pub const FORMAT: u64 = 1;

/// What went into a key, without the body itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyParts {
    /// [`FORMAT`].
    pub format: u64,
    /// The provider.
    pub provider: String,
    /// The server's address.
    pub base_url: String,
    /// The model identifier.
    pub model: String,
    /// The run's seed.
    pub run_seed: Option<u64>,
    /// The SHA-256 of the canonical body.
    pub body_sha256: String,
    /// The canonical body's length, bytes.
    pub body_bytes: usize,
}

/// A stored reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    /// The key.
    pub key: String,
    /// What went into it.
    pub parts: KeyParts,
    /// The latency of the try that answered, s.
    pub latency_s: f64,
    /// The reply's body.
    pub reply: Value,
}

/// JSON with object keys sorted at every depth and no spaces.
pub fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&o[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            x => x.clone(),
        }
    }
    sorted(v).to_string()
}

/// SHA-256 of bytes, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The key of a request body (JSON) sent with a model file's settings and a run's seed.
pub fn key(cfg: &ModelConfig, body: &[u8]) -> Result<(String, KeyParts), String> {
    let body: Value =
        serde_json::from_slice(body).map_err(|e| format!("the request body is not JSON: {e}"))?;
    let stack = json!({"provider": cfg.provider.as_str(), "base_url": cfg.base_url(), "model": cfg.model});
    let whole = canonical(&json!({"format": FORMAT, "stack": stack, "run_seed": cfg.seed, "body": body}));
    let body_text = canonical(&body);
    let parts = KeyParts {
        format: FORMAT,
        provider: cfg.provider.as_str().to_string(),
        base_url: cfg.base_url(),
        model: cfg.model.clone(),
        run_seed: cfg.seed,
        body_sha256: sha256_hex(body_text.as_bytes()),
        body_bytes: body_text.len(),
    };
    Ok((sha256_hex(whole.as_bytes()), parts))
}

/// A cache folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallCache {
    dir: PathBuf,
}

impl CallCache {
    /// The cache in `dir` (made when missing).
    pub fn open(dir: &Path) -> Result<CallCache, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("--cache {}: {e}", dir.display()))?;
        Ok(CallCache { dir: dir.to_path_buf() })
    }

    /// The file of a key.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(key.get(..2).unwrap_or("xx")).join(format!("{key}.json"))
    }

    /// The stored reply of a key, if there is a readable one.
    pub fn get(&self, key: &str) -> Option<Stored> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        serde_json::from_str::<Stored>(&text).ok().filter(|s| s.key == key)
    }

    /// Stores a reply (a temporary file renamed into place).
    pub fn put(&self, s: &Stored) -> std::io::Result<()> {
        let path = self.path(&s.key);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let text = serde_json::to_string(s).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ModelConfig {
        let text = "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:9/v1\"\n";
        ModelConfig::parse(text, Path::new("m.toml")).unwrap()
    }

    #[test]
    fn keys_ignore_key_order_and_change_with_the_stack_the_seed_and_the_body() {
        assert_eq!(
            canonical(&json!({"b": [1, {"d": 1, "c": 2}], "a": null})),
            r#"{"a":null,"b":[1,{"c":2,"d":1}]}"#
        );
        let c = cfg();
        let (k1, p) = key(&c, br#"{"model": "m", "messages": [], "max_tokens": 5}"#).unwrap();
        let (k2, _) = key(&c, br#"{"max_tokens": 5, "messages": [], "model": "m"}"#).unwrap();
        assert_eq!(k1, k2);
        assert_eq!(k1.len(), 64);
        assert_eq!(
            (p.provider.as_str(), p.base_url.as_str(), p.run_seed),
            ("openai", "http://127.0.0.1:9/v1", None)
        );
        assert_eq!(p.body_bytes, r#"{"max_tokens":5,"messages":[],"model":"m"}"#.len());
        let (k3, _) = key(&c, br#"{"max_tokens": 6, "messages": [], "model": "m"}"#).unwrap();
        let seeded = ModelConfig { seed: Some(2), ..cfg() };
        let (k4, _) = key(&seeded, br#"{"max_tokens": 5, "messages": [], "model": "m"}"#).unwrap();
        let other = ModelConfig { base_url: Some("http://127.0.0.1:10/v1".into()), ..cfg() };
        let (k5, _) = key(&other, br#"{"max_tokens": 5, "messages": [], "model": "m"}"#).unwrap();
        assert!(k3 != k1 && k4 != k1 && k5 != k1);
        assert!(key(&c, b"not json").unwrap_err().contains("not JSON"));
    }

    #[test]
    fn entries_round_trip_and_a_broken_one_is_a_miss() {
        let dir = std::env::temp_dir().join(format!("acres-cache-unit-{}", std::process::id()));
        let cache = CallCache::open(&dir).unwrap();
        let (k, parts) = key(&cfg(), b"{}").unwrap();
        assert_eq!(cache.get(&k), None);
        let s = Stored { key: k.clone(), parts, latency_s: 1.25, reply: json!({"choices": []}) };
        cache.put(&s).unwrap();
        assert_eq!(cache.get(&k), Some(s));
        std::fs::write(cache.path(&k), "{").unwrap();
        assert_eq!(cache.get(&k), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
