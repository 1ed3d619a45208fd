//! The check of a finished recording that `validate` makes: the file is MCAP with a summary
//! holding Statistics whose channel counts add up, every channel is `cdr` with a `ros2msg`
//! schema and `offered_qos_profiles`, and the expected topics are there.

use std::collections::BTreeMap;
use std::path::Path;

/// What a readable recording holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingSummary {
    /// Messages in the file (Statistics).
    pub messages: u64,
    /// Messages per topic (Statistics).
    pub topics: BTreeMap<String, u64>,
    /// Chunks (Statistics).
    pub chunks: u32,
}

/// Reads the summary of the recording at `path` and checks that it names every topic of
/// `topics`; the error is one line.
pub fn read_summary(path: &Path, topics: &[&str]) -> Result<RecordingSummary, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read the recording: {e}"))?;
    let summary = mcap::Summary::read(&bytes)
        .map_err(|e| format!("not a readable MCAP file: {e}"))?
        .ok_or("no summary (the recording was not finished)")?;
    let stats = summary.stats.as_ref().ok_or("the summary has no Statistics")?;
    let mut counts = BTreeMap::new();
    for ch in summary.channels.values() {
        let schema = ch.schema.as_ref().ok_or_else(|| format!("{}: no schema", ch.topic))?;
        if schema.encoding != "ros2msg" || ch.message_encoding != "cdr" {
            return Err(format!(
                "{}: schema {} / message {}, expected ros2msg / cdr",
                ch.topic, schema.encoding, ch.message_encoding
            ));
        }
        if !ch.metadata.contains_key("offered_qos_profiles") {
            return Err(format!("{}: no offered_qos_profiles", ch.topic));
        }
        counts.insert(ch.topic.clone(), stats.channel_message_counts.get(&ch.id).copied().unwrap_or(0));
    }
    let total: u64 = stats.channel_message_counts.values().sum();
    if total != stats.message_count {
        return Err(format!(
            "Statistics: the channels' counts add up to {total}, not {}",
            stats.message_count
        ));
    }
    if let Some(missing) = topics.iter().find(|t| !counts.contains_key(**t)) {
        return Err(format!("no channel {missing}"));
    }
    Ok(RecordingSummary { messages: stats.message_count, topics: counts, chunks: stats.chunk_count })
}
