//! A [`Bag`] on a thread of its own: the loop encodes each message (CDR, on the loop's thread,
//! from the state it reads) and hands the bytes over a bounded channel; the thread writes them,
//! compresses the chunks and flushes them. Compression, the most costly part of recording,
//! then overlaps the simulation instead of adding to it.
//!
//! Messages go over in batches of up to [`BATCH_MESSAGES`] (one hand-over per message would cost
//! more than the writing), and a batch goes over at the latest with the first message of each
//! flush period ([`FLUSH_EVERY_S`]), which makes the writer flush what came before it: a killed
//! run that the writer kept up with (a paced run) loses what one thread would, at most one
//! period.
//! Messages are written in the order they are sent, so the file is the same as one written on
//! the loop's thread. The channel holds at most [`QUEUE_BATCHES`] batches: when the writer falls
//! behind, the loop waits (the recording never drops a message).

use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

use acres_msgs::Message;

use super::bag::{time_ns, Bag, BagError, FLUSH_EVERY_S};

/// Messages in one hand-over to the writer thread at most.
pub const BATCH_MESSAGES: usize = 256;
/// Batches waiting for the writer thread at most.
pub const QUEUE_BATCHES: usize = 16;

/// One message: channel, mission time (ns), CDR bytes.
type Item = (u16, u64, Vec<u8>);

enum Cmd {
    /// Messages in order.
    Batch(Vec<Item>),
    /// Write the summary and rename the file.
    Finish,
}

/// A bag written by its own thread.
#[derive(Debug)]
pub struct Sink {
    tx: Option<SyncSender<Cmd>>,
    batch: Vec<Item>,
    /// The batch is sent before a message at or after this mission time, ns.
    period_end_ns: u64,
    thread: Option<JoinHandle<Result<Option<PathBuf>, BagError>>>,
}

impl Sink {
    /// Moves `bag` (its channels added) to a new writer thread.
    pub fn spawn(bag: Bag) -> Sink {
        let (tx, rx) = sync_channel::<Cmd>(QUEUE_BATCHES);
        let thread = std::thread::Builder::new()
            .name("acres-recording".into())
            .spawn(move || {
                let mut bag = bag;
                for cmd in rx {
                    match cmd {
                        Cmd::Batch(items) => {
                            for (ch, t_ns, data) in items {
                                bag.write_bytes(ch, t_ns, &data)?;
                            }
                        }
                        Cmd::Finish => return bag.finish().map(Some),
                    }
                }
                // Dropped without Finish: the `.part` file stays (with the summary the MCAP
                // writer adds when dropped), never renamed.
                Ok(None)
            })
            .expect("the recording thread starts");
        Sink {
            tx: Some(tx),
            batch: Vec::with_capacity(BATCH_MESSAGES),
            period_end_ns: time_ns(FLUSH_EVERY_S),
            thread: Some(thread),
        }
    }

    /// Queues one message's CDR bytes (sent with its batch).
    pub fn write_bytes(&mut self, channel: u16, t_ns: u64, data: Vec<u8>) -> Result<(), BagError> {
        // The first message of a flush period goes over at once with the batch before it: the
        // writer flushes everything before it when it writes it.
        let crossed = t_ns >= self.period_end_ns;
        while self.period_end_ns <= t_ns {
            self.period_end_ns += time_ns(FLUSH_EVERY_S);
        }
        self.batch.push((channel, t_ns, data));
        if crossed || self.batch.len() >= BATCH_MESSAGES {
            self.send()?;
        }
        Ok(())
    }

    /// Hands the batch to the writer thread.
    fn send(&mut self) -> Result<(), BagError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_MESSAGES));
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(Cmd::Batch(batch)).is_ok());
        if sent {
            return Ok(());
        }
        // The thread stopped on an error: take it.
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => Err(e),
            _ => Err(BagError::Stopped),
        }
    }

    /// Encodes and sends one message.
    pub fn write<M: Message>(&mut self, channel: u16, t_ns: u64, msg: &M) -> Result<(), BagError> {
        self.write_bytes(channel, t_ns, msg.encode())
    }

    /// Waits for every message to be written, then writes the summary and renames the file.
    pub fn finish(mut self) -> Result<PathBuf, BagError> {
        self.send()?;
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Cmd::Finish);
        }
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Ok(Some(path)))) => Ok(path),
            Some(Ok(Err(e))) => Err(e),
            _ => Err(BagError::Stopped),
        }
    }
}
