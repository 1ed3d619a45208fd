//! Reading lines with a bound: at most [`MAX_LINE_BYTES`](crate::MAX_LINE_BYTES) of a line are
//! kept in memory (a longer one is read to its end, dropped and reported with its length), and
//! an optional deadline ends a line that drips in too slowly. The harness reads the bridge's
//! lines through it; a line that never ends costs memory bounded by the limit, never more.

use std::io::BufRead;
use std::time::Instant;

/// One line read with a bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundedLine {
    /// A line (with its `\n` when it had one), at most the limit.
    Line(Vec<u8>),
    /// A line longer than the limit, read to its end and dropped: its length, bytes.
    Oversized(usize),
    /// The end of the stream (nothing read).
    End,
    /// The stream ended inside a line of at most the limit: the peer closed mid-line (a session
    /// ended while a sweep was on its way), not a line to decode. The part's length, bytes.
    Cut(usize),
}

/// Reads one line of at most `max` bytes (its `\n` not counted) from `r`. A line past `max`
/// is consumed to its `\n` without being kept ([`BoundedLine::Oversized`]); a stream that ends
/// inside a line gives [`BoundedLine::Cut`] with the part's length (or `Oversized` past `max`),
/// never the part as a line. `deadline`: past it, before the line's end, the error is
/// [`std::io::ErrorKind::TimedOut`] (checked after each chunk the reader gives, so a socket's
/// read timeout bounds the wait for each chunk).
pub fn read_bounded(
    r: &mut impl BufRead,
    max: usize,
    deadline: Option<Instant>,
) -> std::io::Result<BoundedLine> {
    let mut buf: Vec<u8> = Vec::new();
    let mut len = 0usize;
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the line did not end before the deadline ({len} bytes read)"),
            ));
        }
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(match len {
                0 => BoundedLine::End,
                n if n > max => BoundedLine::Oversized(n),
                n => BoundedLine::Cut(n),
            });
        }
        let (n, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        len += n;
        if len <= max + 1 {
            buf.extend_from_slice(&chunk[..n]);
        } else if !buf.is_empty() {
            buf = Vec::new();
        }
        r.consume(n);
        if done {
            return Ok(if len > max + 1 { BoundedLine::Oversized(len - 1) } else { BoundedLine::Line(buf) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    /// An endless line: `x` forever, counting what was read.
    struct Endless(u64);

    impl Read for Endless {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            out.fill(b'x');
            self.0 += out.len() as u64;
            Ok(out.len())
        }
    }

    #[test]
    fn lines_up_to_the_limit_pass_and_longer_ones_are_dropped_with_their_length() {
        let text = b"ab\ncdef\n\nxyz".to_vec();
        let mut r = BufReader::with_capacity(2, &text[..]);
        assert_eq!(read_bounded(&mut r, 4, None).unwrap(), BoundedLine::Line(b"ab\n".to_vec()));
        assert_eq!(read_bounded(&mut r, 4, None).unwrap(), BoundedLine::Line(b"cdef\n".to_vec()));
        assert_eq!(read_bounded(&mut r, 4, None).unwrap(), BoundedLine::Line(b"\n".to_vec()));
        assert_eq!(read_bounded(&mut r, 4, None).unwrap(), BoundedLine::Cut(3));
        assert_eq!(read_bounded(&mut r, 4, None).unwrap(), BoundedLine::End);
        let text = b"abcdefgh\nok\n".to_vec();
        let mut r = BufReader::with_capacity(3, &text[..]);
        assert_eq!(read_bounded(&mut r, 4, None).unwrap(), BoundedLine::Oversized(8));
        assert_eq!(read_bounded(&mut r, 4, None).unwrap(), BoundedLine::Line(b"ok\n".to_vec()));
    }

    #[test]
    fn a_stream_that_ends_inside_a_line_is_cut_never_a_line_to_decode() {
        // A session closed mid-sweep: the sweep's first bytes, then the end of the stream.
        let text = b"{\"type\":\"pong\",\"n\":1}\n{\"type\":\"sweep\",\"data\":\"AAAA".to_vec();
        for cap in [1, 5, 64] {
            let mut r = BufReader::with_capacity(cap, &text[..]);
            let first = read_bounded(&mut r, 1 << 10, None).unwrap();
            assert!(matches!(first, BoundedLine::Line(ref l) if l.ends_with(b"}\n")), "{first:?}");
            assert_eq!(read_bounded(&mut r, 1 << 10, None).unwrap(), BoundedLine::Cut(28));
            assert_eq!(read_bounded(&mut r, 1 << 10, None).unwrap(), BoundedLine::End);
        }
        // Past the limit the cut part is still told as oversized, with its length.
        let mut r = BufReader::with_capacity(4, &b"abcdefgh"[..]);
        assert_eq!(read_bounded(&mut r, 4, None).unwrap(), BoundedLine::Oversized(8));
        assert_eq!(read_bounded(&mut r, 4, None).unwrap(), BoundedLine::End);
    }

    #[test]
    fn an_endless_line_ends_at_the_deadline_with_bounded_memory() {
        let mut r = BufReader::with_capacity(1 << 16, Endless(0));
        let deadline = Instant::now() + std::time::Duration::from_millis(200);
        let e = read_bounded(&mut r, 1 << 10, Some(deadline)).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        assert!(r.get_ref().0 > 1 << 20, "it read on past the limit: {} bytes", r.get_ref().0);
    }
}
