//! The positioned raw output log: every byte a session printed, addressed by an absolute
//! position that only grows.
//!
//! A ring of [`DEFAULT_CAPACITY`] bytes: older bytes are dropped, positions are never
//! reused, so `since` cursors stay valid and a reader can tell when it fell behind. Chunk
//! arrival times are kept alongside for asciicast transcripts.

use std::collections::VecDeque;
use std::time::Duration;

/// How many raw bytes a session keeps (1 MiB).
pub const DEFAULT_CAPACITY: usize = 1 << 20;

#[derive(Debug)]
pub struct OutputLog {
    bytes: VecDeque<u8>,
    capacity: usize,
    /// Absolute position of `bytes[0]`.
    start: u64,
    /// When each chunk arrived (time since the session started) and where it began.
    chunks: VecDeque<(Duration, u64)>,
}

impl OutputLog {
    pub fn new(capacity: usize) -> Self {
        OutputLog {
            bytes: VecDeque::new(),
            capacity,
            start: 0,
            chunks: VecDeque::new(),
        }
    }

    /// Position one past the last byte ever written.
    pub fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    /// Position of the oldest byte still kept.
    pub fn start(&self) -> u64 {
        self.start
    }

    pub fn push(&mut self, data: &[u8], at: Duration) {
        let end = self.end() + data.len() as u64;
        self.chunks.push_back((at, self.end()));
        // Room is made before the bytes go in, so the ring never holds (nor allocates) more
        // than its capacity: growing past it would double the buffer, and a ring that wraps
        // touches all of it.
        let new = &data[data.len().saturating_sub(self.capacity)..];
        let excess = (self.bytes.len() + new.len()).saturating_sub(self.capacity);
        self.bytes.drain(..excess);
        let needed = self.bytes.len() + new.len();
        if needed > self.bytes.capacity() {
            let grown = (self.bytes.capacity() * 2).clamp(needed, self.capacity);
            self.bytes.reserve_exact(grown - self.bytes.len());
        }
        self.bytes.extend(new);
        self.start = end - self.bytes.len() as u64;
        while self.chunks.len() > 1 && self.chunks[1].1 <= self.start {
            self.chunks.pop_front();
        }
    }

    /// The bytes from `from` (clamped to what is kept) to the end, and where they start.
    pub fn since(&self, from: u64) -> (u64, Vec<u8>) {
        let from = from.clamp(self.start, self.end());
        let skip = (from - self.start) as usize;
        let (a, b) = self.bytes.as_slices();
        let mut out = Vec::with_capacity(self.bytes.len() - skip);
        if skip < a.len() {
            out.extend_from_slice(&a[skip..]);
            out.extend_from_slice(b);
        } else {
            out.extend_from_slice(&b[skip - a.len()..]);
        }
        (from, out)
    }

    /// The bytes between two positions (clamped).
    pub fn range(&self, from: u64, to: u64) -> Vec<u8> {
        let from = from.clamp(self.start, self.end());
        let to = to.clamp(from, self.end());
        let (a, b) = ((from - self.start) as usize, (to - self.start) as usize);
        self.bytes.range(a..b).copied().collect()
    }

    /// Chunks still kept, as (time, bytes) — what an asciicast needs.
    pub fn timed_chunks(&self) -> Vec<(Duration, Vec<u8>)> {
        let mut out = Vec::with_capacity(self.chunks.len());
        for (i, &(at, pos)) in self.chunks.iter().enumerate() {
            let next = self.chunks.get(i + 1).map_or(self.end(), |c| c.1);
            out.push((at, self.range(pos, next)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_only_grow_and_old_bytes_drop() {
        let mut log = OutputLog::new(8);
        log.push(b"hello", Duration::ZERO);
        assert_eq!(log.end(), 5);
        log.push(b" world", Duration::from_millis(5));
        assert_eq!(log.end(), 11);
        assert_eq!(log.start(), 3);
        assert_eq!(log.since(0), (3, b"lo world".to_vec()));
        assert_eq!(log.since(6), (6, b"world".to_vec()));
        assert_eq!(log.since(99), (11, Vec::new()));
        assert_eq!(log.range(5, 8), b" wo".to_vec());
    }

    #[test]
    fn the_ring_never_allocates_past_its_capacity() {
        let mut log = OutputLog::new(1000);
        for i in 0..50u8 {
            log.push(&[i; 300], Duration::ZERO);
            assert!(log.bytes.capacity() < 2000, "{}", log.bytes.capacity());
        }
        assert_eq!(log.end(), 15_000);
        assert_eq!(log.start(), 14_000);
        let (from, kept) = log.since(0);
        assert_eq!(from, 14_000);
        assert_eq!(&kept[..100], &[46; 100]);
        assert_eq!(
            &kept[100..],
            &[[47; 300], [48; 300], [49; 300]].concat()[..]
        );
        // One push larger than the ring keeps its last bytes only.
        let big: Vec<u8> = (0..2500u32).map(|i| (i % 251) as u8).collect();
        log.push(&big, Duration::ZERO);
        assert_eq!(log.end(), 17_500);
        assert_eq!(log.since(0), (16_500, big[1500..].to_vec()));
    }

    #[test]
    fn timed_chunks_follow_the_ring() {
        let mut log = OutputLog::new(100);
        log.push(b"ab", Duration::ZERO);
        log.push(b"cd", Duration::from_secs(1));
        let chunks = log.timed_chunks();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[1], (Duration::from_secs(1), b"cd".to_vec()));
    }
}
