//! The recorder's writer thread: the loop pushes [`Item`]s (cheap shots of the world, events,
//! rows) and hands them over in batches over a bounded channel; the thread makes the messages,
//! encodes them, writes both files and compresses their chunks ([`Files`]). The encoding and
//! the compression, nearly all of the recording's cost, then overlap the simulation.
//!
//! A batch goes over when it holds [`BATCH_ITEMS`] items, when [`SEND_EVERY_S`] of wall time
//! has passed since the last hand-over (checked at each push), or at once when the loop asks
//! ([`Sink::send`]: after a planner row, before the loop may wait for a model). At most
//! [`QUEUE_BATCHES`] batches wait for the thread: when it falls behind, the loop waits (the
//! recording never drops a message). The thread closes the open chunks when no batch has come
//! for [`IDLE_FLUSH_S`] (the world waits for a model, or the run is paced slowly).
//!
//! So a process killed mid-run loses, besides the open chunk (see [`super::bag`]), at most
//! the batch being filled ([`BATCH_ITEMS`] items or [`SEND_EVERY_S`] of wall time) and the
//! [`QUEUE_BATCHES`] batches waiting.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::bag::BagError;
use super::compose::Files;
use super::{Item, Shot};

/// Items in one hand-over at most (one item a control step: 64 are 3.2 s of mission time).
pub const BATCH_ITEMS: usize = 64;
/// Batches waiting for the writer thread at most (102 s of mission time). On two cores the writer
/// of a fast run is about as quick as the run itself: with 2 waiting the loop waited for it again
/// and again (each wait and wake-up costing more than the writing it waited for), and recording
/// added 23–29 % to t1_05's best wall time against 9–15 % with 32. The memory the queue can
/// hold is bounded too: 2,048 shots, about 2 MB with their scans, and the clouds due in them.
pub const QUEUE_BATCHES: usize = 32;
/// Wall time after which the batch being filled is handed over at its next push, s.
pub const SEND_EVERY_S: f64 = 0.02;
/// Wall time without a new batch after which the thread closes the open chunks, s.
pub const IDLE_FLUSH_S: f64 = 1.0;

/// The processor time of every writer thread that has ended in this process, ns (Linux; 0
/// elsewhere): what the recording benchmark reports as the writer's cost.
pub static WRITER_CPU_NS: AtomicU64 = AtomicU64::new(0);

/// The calling thread's processor time so far, ns (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`;
/// 0 where the platform has none).
pub fn thread_cpu_ns() -> u64 {
    cpu_time::ThreadTime::try_now().map_or(0, |t| t.as_duration().as_nanos() as u64)
}

/// A written batch handed back: its vector (empty) and its scans' range buffers.
struct Returned {
    batch: Vec<Item>,
    scans: Vec<Vec<f32>>,
}

enum Cmd {
    /// Items in order.
    Batch(Vec<Item>),
    /// Write the summaries and rename the files.
    Finish,
}

/// Both files, written by their own thread.
#[derive(Debug)]
pub struct Sink {
    tx: Option<SyncSender<Cmd>>,
    /// Written batches handed back, emptied by the writer thread: the loop's thread reads none
    /// of the items the other core last wrote (each line of them a cache miss here: reading a
    /// returned batch's items cost the loop about 18 µs a batch, 6 ms of t1_05's run).
    back: Receiver<Returned>,
    batch: Vec<Item>,
    last_send: Instant,
    thread: Option<JoinHandle<Result<bool, BagError>>>,
    /// The scans' range buffers of written batches, for the next shots.
    spare_scans: Vec<Vec<f32>>,
}

/// Range buffers kept for the next scans at most (a batch brings back about 32).
const SPARE_SCANS: usize = 64;

impl Sink {
    /// Starts the writer thread, which makes its files (`files`: both files, their channels
    /// added) and writes what comes.
    pub fn spawn(files: impl FnOnce() -> Result<Files, BagError> + Send + 'static) -> Sink {
        let (tx, rx) = sync_channel::<Cmd>(QUEUE_BATCHES);
        let (back_tx, back) = sync_channel::<Returned>(QUEUE_BATCHES + 2);
        let thread = std::thread::Builder::new()
            .name("acres-recording".into())
            .spawn(move || {
                let written = files().and_then(|files| write_all(files, rx, back_tx));
                WRITER_CPU_NS.fetch_add(thread_cpu_ns(), Ordering::Relaxed);
                written
            })
            .expect("the recording thread starts");
        Sink {
            tx: Some(tx),
            back,
            batch: Vec::with_capacity(BATCH_ITEMS),
            last_send: Instant::now(),
            thread: Some(thread),
            spare_scans: Vec::new(),
        }
    }

    /// A buffer for a scan's ranges: one of a written batch, else a new one (empty either way).
    pub fn scan_buffer(&mut self) -> Vec<f32> {
        let mut buf = self.spare_scans.pop().unwrap_or_default();
        buf.clear();
        buf
    }

    /// Queues one item (handed over with its batch).
    pub fn push(&mut self, item: Item) -> Result<(), BagError> {
        self.batch.push(item);
        if self.batch.len() >= BATCH_ITEMS
            || self.last_send.elapsed() >= Duration::from_secs_f64(SEND_EVERY_S)
        {
            self.send()?;
        }
        Ok(())
    }

    /// Hands the batch to the writer thread now.
    pub fn send(&mut self) -> Result<(), BagError> {
        self.last_send = Instant::now();
        if self.batch.is_empty() {
            return Ok(());
        }
        let next = match self.back.try_recv() {
            Ok(Returned { batch, mut scans }) => {
                if self.spare_scans.len() < SPARE_SCANS {
                    self.spare_scans.append(&mut scans);
                }
                batch
            }
            Err(_) => Vec::with_capacity(BATCH_ITEMS),
        };
        let batch = std::mem::replace(&mut self.batch, next);
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

    /// Waits for every item to be written, then writes the summaries and renames the files.
    pub fn finish(mut self) -> Result<(), BagError> {
        self.send()?;
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Cmd::Finish);
        }
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Ok(true))) => Ok(()),
            Some(Ok(Err(e))) => Err(e),
            _ => Err(BagError::Stopped),
        }
    }
}

/// The writer thread: writes each batch, closes the open chunks when none has come for
/// [`IDLE_FLUSH_S`], and finishes the files when told; true when finished.
fn write_all(mut files: Files, rx: Receiver<Cmd>, back_tx: SyncSender<Returned>) -> Result<bool, BagError> {
    let idle = Duration::from_secs_f64(IDLE_FLUSH_S);
    // True while messages are in open chunks.
    let mut open = false;
    loop {
        let cmd = if open {
            match rx.recv_timeout(idle) {
                Ok(cmd) => cmd,
                Err(RecvTimeoutError::Timeout) => {
                    files.flush()?;
                    open = false;
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match rx.recv() {
                Ok(cmd) => cmd,
                Err(_) => break,
            }
        };
        match cmd {
            Cmd::Batch(mut items) => {
                for item in &mut items {
                    files.write(item)?;
                }
                open = true;
                let scans = items
                    .drain(..)
                    .filter_map(|item| match item {
                        Item::Step(Shot { scan_ranges_m, .. }) => scan_ranges_m,
                        _ => None,
                    })
                    .collect();
                // Dropped here only when the loop has not taken the ones before.
                let _ = back_tx.try_send(Returned { batch: items, scans });
            }
            Cmd::Finish => return files.finish().map(|()| true),
        }
    }
    // Dropped without Finish: the `.part` files stay (with the summary the MCAP
    // writer adds when dropped), never renamed.
    Ok(false)
}
