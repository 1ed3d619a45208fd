//! CDR as ROS 2 middlewares write it: plain CDR (XCDR version 1), little-endian, behind the
//! 4-byte encapsulation header `00 01 00 00`.
//!
//! The format, as far as ROS messages need it:
//! - Every primitive is aligned to its own size (1, 2, 4 or 8 bytes; `float64`, `int64` and
//!   `uint64` to 8), counted from the end of the encapsulation header; padding bytes are written
//!   as 0 and not checked on decode.
//! - `bool` is one byte, 0 or 1 (anything else is an error on decode).
//! - A string is a `uint32` length that counts the terminating NUL, the UTF-8 bytes, then NUL.
//! - A sequence (`T[]`) is a `uint32` element count, then the elements; a fixed array (`T[N]`)
//!   is the elements only. A nested message is its fields in order, with no header of its own.
//!
//! [`Writer`] and [`Reader`] are the one encoder and the one decoder; [`Cdr`] is implemented for
//! the primitives, `String`, `Vec<T>` and `[T; N]`, and by `message!` for each message. Decoding
//! never panics: bad input gives a [`CdrError`].

use thiserror::Error;

/// The encapsulation header of little-endian plain CDR (`CDR_LE`), options 0.
pub const ENCAPSULATION_CDR_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

/// Why bytes could not be decoded. Offsets count from the end of the encapsulation header.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CdrError {
    /// Fewer than 4 bytes: no encapsulation header.
    #[error("the data is {len} bytes long, shorter than the 4-byte encapsulation header")]
    NoHeader {
        /// The length of the data, bytes.
        len: usize,
    },
    /// The encapsulation is not little-endian plain CDR.
    #[error("encapsulation {kind:02x?} is not little-endian plain CDR [00, 01]")]
    Encapsulation {
        /// The first two header bytes.
        kind: [u8; 2],
    },
    /// The data ends before a value does.
    #[error("the data ends at byte {at}: {need} more bytes needed")]
    Truncated {
        /// Where the value starts, bytes.
        at: usize,
        /// How many bytes are missing.
        need: usize,
    },
    /// A `bool` that is neither 0 nor 1.
    #[error("byte {at}: bool value {value} is neither 0 nor 1")]
    InvalidBool {
        /// Where the value is, bytes.
        at: usize,
        /// The byte found.
        value: u8,
    },
    /// A string whose last byte is not NUL.
    #[error("byte {at}: a string of {len} bytes does not end with NUL")]
    MissingNul {
        /// Where the string's bytes start, bytes.
        at: usize,
        /// Its length field, bytes.
        len: usize,
    },
    /// A string that is not UTF-8.
    #[error("byte {at}: a string is not UTF-8")]
    InvalidUtf8 {
        /// Where the string's bytes start, bytes.
        at: usize,
    },
    /// More bytes follow the message than the up to 3 bytes of padding a payload may carry.
    #[error("{extra} bytes are left after the message (at most 3 bytes of padding may follow)")]
    TrailingBytes {
        /// How many bytes are left.
        extra: usize,
    },
}

/// Writes CDR into a buffer that starts with the encapsulation header.
#[derive(Debug, Clone)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Default for Writer {
    fn default() -> Self {
        Self::new()
    }
}

impl Writer {
    /// A buffer holding only the encapsulation header.
    pub fn new() -> Self {
        Self::reusing(Vec::with_capacity(64))
    }

    /// Writes into `buf`, emptied first (its capacity kept: one buffer for many messages).
    pub fn reusing(mut buf: Vec<u8>) -> Self {
        buf.clear();
        buf.extend_from_slice(&ENCAPSULATION_CDR_LE);
        Self { buf }
    }

    /// Pads with zeros to a multiple of `size` bytes after the header.
    fn align(&mut self, size: usize) {
        let pos = self.buf.len() - ENCAPSULATION_CDR_LE.len();
        let pad = (size - pos % size) % size;
        self.buf.resize(self.buf.len() + pad, 0);
    }

    /// Writes a primitive's little-endian bytes, aligned to their length.
    pub fn primitive<const N: usize>(&mut self, bytes: [u8; N]) {
        self.align(N);
        self.buf.extend_from_slice(&bytes);
    }

    /// Writes raw bytes, unaligned (the body of a `uint8` sequence or array).
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Writes a sequence's element count.
    pub fn count(&mut self, n: usize) {
        // A ROS sequence cannot hold more than u32::MAX elements; saturate rather than wrap.
        self.primitive(u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
    }

    /// The encoded bytes, header included.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

/// Reads CDR from bytes that start with the encapsulation header.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Checks the encapsulation header and starts after it.
    pub fn new(bytes: &'a [u8]) -> Result<Self, CdrError> {
        if bytes.len() < ENCAPSULATION_CDR_LE.len() {
            return Err(CdrError::NoHeader { len: bytes.len() });
        }
        if bytes[..2] != ENCAPSULATION_CDR_LE[..2] {
            return Err(CdrError::Encapsulation { kind: [bytes[0], bytes[1]] });
        }
        Ok(Self { data: &bytes[ENCAPSULATION_CDR_LE.len()..], pos: 0 })
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// Takes `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], CdrError> {
        if self.remaining() < n {
            return Err(CdrError::Truncated { at: self.pos, need: n - self.remaining() });
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// The padding before a value aligned to `size` bytes, bytes.
    fn padding(&self, size: usize) -> usize {
        (size - self.pos % size) % size
    }

    /// Reads a primitive's little-endian bytes, aligned to their length.
    pub fn primitive<const N: usize>(&mut self) -> Result<[u8; N], CdrError> {
        self.take(self.padding(N))?;
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// Reads a sequence's element count.
    pub fn count(&mut self) -> Result<usize, CdrError> {
        Ok(u32::from_le_bytes(self.primitive()?) as usize)
    }

    /// Where the reader is, bytes after the header.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Ends reading: at most 3 bytes of padding may be left.
    pub fn finish(self) -> Result<(), CdrError> {
        match self.remaining() {
            0..=3 => Ok(()),
            extra => Err(CdrError::TrailingBytes { extra }),
        }
    }
}

/// A value with a CDR form.
pub trait Cdr: Sized {
    /// Appends the value.
    fn write(&self, w: &mut Writer);
    /// Reads one value.
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError>;
    /// Appends the elements of a sequence or array (element by element unless overridden).
    fn write_slice(items: &[Self], w: &mut Writer) {
        for item in items {
            item.write(w);
        }
    }
    /// Reads `n` elements of a sequence or array.
    fn read_vec(r: &mut Reader<'_>, n: usize) -> Result<Vec<Self>, CdrError> {
        read_each(r, n)
    }
}

/// Reads `n` elements one by one.
fn read_each<T: Cdr>(r: &mut Reader<'_>, n: usize) -> Result<Vec<T>, CdrError> {
    // Every element takes at least one byte: the capacity never exceeds the data.
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        out.push(T::read(r)?);
    }
    Ok(out)
}

macro_rules! numeric {
    ($($t:ty),*) => {$(
        impl Cdr for $t {
            fn write(&self, w: &mut Writer) {
                w.primitive(self.to_le_bytes());
            }
            fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
                Ok(<$t>::from_le_bytes(r.primitive()?))
            }
            // Aligned once: the elements that follow are aligned by their size. The same bytes
            // as element by element, in one pass (scans, covariances, point fields).
            fn write_slice(items: &[Self], w: &mut Writer) {
                const N: usize = std::mem::size_of::<$t>();
                if items.is_empty() {
                    return;
                }
                w.align(N);
                w.buf.reserve(items.len() * N);
                for x in items {
                    w.buf.extend_from_slice(&x.to_le_bytes());
                }
            }
            fn read_vec(r: &mut Reader<'_>, n: usize) -> Result<Vec<Self>, CdrError> {
                const N: usize = std::mem::size_of::<$t>();
                let pad = r.padding(N);
                let fits = n > 0 && n.checked_mul(N).is_some_and(|len| pad + len <= r.remaining());
                if !fits {
                    // Nothing to read, or too little: element by element gives the exact error.
                    return read_each(r, n);
                }
                r.take(pad)?;
                let bytes = r.take(n * N)?;
                Ok(bytes
                    .chunks_exact(N)
                    .map(|c| <$t>::from_le_bytes(c.try_into().expect("chunks of N bytes")))
                    .collect())
            }
        }
    )*};
}
numeric!(i8, i16, u16, i32, u32, i64, u64, f32, f64);

impl Cdr for u8 {
    fn write(&self, w: &mut Writer) {
        w.primitive([*self]);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        Ok(r.primitive::<1>()?[0])
    }
    fn write_slice(items: &[Self], w: &mut Writer) {
        w.bytes(items);
    }
    fn read_vec(r: &mut Reader<'_>, n: usize) -> Result<Vec<Self>, CdrError> {
        Ok(r.take(n)?.to_vec())
    }
}

impl Cdr for bool {
    fn write(&self, w: &mut Writer) {
        w.primitive([u8::from(*self)]);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        let at = r.position();
        match r.primitive::<1>()?[0] {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(CdrError::InvalidBool { at, value }),
        }
    }
}

impl Cdr for String {
    fn write(&self, w: &mut Writer) {
        w.count(self.len() + 1);
        w.bytes(self.as_bytes());
        w.bytes(&[0]);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        let len = r.count()?;
        let at = r.position();
        // A length of 0 is not valid CDR, but some writers use it for "": read it as "".
        if len == 0 {
            return Ok(String::new());
        }
        let bytes = r.take(len)?;
        let (text, nul) = bytes.split_at(len - 1);
        if nul != [0] {
            return Err(CdrError::MissingNul { at, len });
        }
        String::from_utf8(text.to_vec()).map_err(|_| CdrError::InvalidUtf8 { at })
    }
}

impl<T: Cdr> Cdr for Vec<T> {
    fn write(&self, w: &mut Writer) {
        w.count(self.len());
        T::write_slice(self, w);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        let n = r.count()?;
        T::read_vec(r, n)
    }
}

impl<T: Cdr, const N: usize> Cdr for [T; N] {
    fn write(&self, w: &mut Writer) {
        T::write_slice(self, w);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        let at = r.position();
        // read_vec gives exactly N elements or an error, so the conversion cannot fail; map it
        // to an error anyway rather than panic.
        T::read_vec(r, N)?.try_into().map_err(|_| CdrError::Truncated { at, need: N })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `lead` bytes, then `items` element by element (as the trait's default methods write) or
    /// through `write_slice`.
    fn written<T: Cdr>(lead: usize, items: &[T], bulk: bool) -> Vec<u8> {
        let mut w = Writer::new();
        for _ in 0..lead {
            7u8.write(&mut w);
        }
        if bulk {
            T::write_slice(items, &mut w);
        } else {
            items.iter().for_each(|x| x.write(&mut w));
        }
        w.into_bytes()
    }

    #[test]
    fn numeric_slices_write_and_read_the_bytes_element_by_element_does() {
        let f64s: Vec<f64> = (0..37).map(|i| f64::from(i) * -1.25).collect();
        let f32s: Vec<f32> = (0..361).map(|i| i as f32 * 0.5).collect();
        let u16s: Vec<u16> = (0..5).collect();
        for lead in 1..=4 {
            assert_eq!(written(lead, &f64s, true), written(lead, &f64s, false), "f64 after {lead} bytes");
            assert_eq!(written(lead, &f32s, true), written(lead, &f32s, false), "f32 after {lead} bytes");
            assert_eq!(written(lead, &u16s, true), written(lead, &u16s, false), "u16 after {lead} bytes");
        }
        // Read back, and a truncated sequence fails with the error element by element gives.
        let bytes = written(1, &f32s, false);
        let mut r = Reader::new(&bytes).unwrap();
        u8::read(&mut r).unwrap();
        assert_eq!(f32::read_vec(&mut r, f32s.len()).unwrap(), f32s);
        let short = &bytes[..bytes.len() - 3];
        let mut r = Reader::new(short).unwrap();
        u8::read(&mut r).unwrap();
        let err = f32::read_vec(&mut r, f32s.len()).unwrap_err();
        let mut r = Reader::new(short).unwrap();
        u8::read(&mut r).unwrap();
        let each_err = (0..f32s.len()).map(|_| f32::read(&mut r)).find_map(Result::err).unwrap();
        assert_eq!(err, each_err);
    }

    #[test]
    fn f64_after_u8_is_aligned_to_8_from_the_header_end() {
        let mut w = Writer::new();
        7u8.write(&mut w);
        1.5f64.write(&mut w);
        let bytes = w.into_bytes();
        assert_eq!(bytes.len(), 4 + 8 + 8);
        assert_eq!(&bytes[4..12], &[7, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&bytes[12..], &1.5f64.to_le_bytes());
    }

    #[test]
    fn string_length_counts_the_nul() {
        let mut w = Writer::new();
        "ab".to_string().write(&mut w);
        assert_eq!(&w.into_bytes()[4..], &[3, 0, 0, 0, b'a', b'b', 0]);
    }

    #[test]
    fn a_bool_of_2_is_an_error_with_its_offset() {
        let mut r = Reader::new(&[0, 1, 0, 0, 2]).unwrap();
        assert_eq!(bool::read(&mut r), Err(CdrError::InvalidBool { at: 0, value: 2 }));
    }

    #[test]
    fn a_huge_sequence_count_is_truncation_not_an_allocation() {
        let mut r = Reader::new(&[0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 2]).unwrap();
        assert!(matches!(Vec::<u64>::read(&mut r), Err(CdrError::Truncated { .. })));
    }

    #[test]
    fn big_endian_encapsulation_is_refused() {
        assert_eq!(Reader::new(&[0, 0, 0, 0]).err(), Some(CdrError::Encapsulation { kind: [0, 0] }));
        assert_eq!(Reader::new(&[0, 1]).err(), Some(CdrError::NoHeader { len: 2 }));
    }
}
