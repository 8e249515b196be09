//! The whole raw output of one `terminal_exec`, however long, while the 1 MiB log rolls on.
//!
//! While a command runs, the reader also appends every chunk here: in memory up to
//! [`IN_MEMORY`], then in a spill file, so a command's full output can always be rendered
//! and written to `fullOutputPath`. Nothing is lost and memory stays bounded.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Arc;

use crate::host::Spills;

/// Bytes kept in memory before the capture moves to a file. Small: the output is rendered
/// while it comes ([`super::prompt_exec_render`]), so the capture is read back in chunks, and
/// a file's pages are the page cache's, not the server's (`seq 1 200000`, 1.3 MB, held here
/// in memory was most of the server's peak).
pub(super) const IN_MEMORY: usize = 64 << 10;

#[derive(Debug)]
pub(super) struct ExecCapture {
    /// Absolute output position of the first captured byte.
    pub start: u64,
    memory: Vec<u8>,
    file: Option<File>,
    len: u64,
    /// A file could not be made or written: the capture stays in memory.
    no_file: bool,
    /// Where the file is made once memory is full.
    spills: Arc<Spills>,
}

impl ExecCapture {
    /// A capture from position `start`; its file, if needed, is made in `spills`.
    pub(super) fn new(start: u64, spills: Arc<Spills>) -> Self {
        ExecCapture {
            start,
            memory: Vec::new(),
            file: None,
            len: 0,
            no_file: false,
            spills,
        }
    }

    pub(super) fn push(&mut self, chunk: &[u8]) {
        let before = self.len;
        self.len += chunk.len() as u64;
        if let Some(file) = &mut self.file {
            if file.write_all(chunk).is_ok() {
                return;
            }
            // A full disk: back to memory, with what the file holds before this chunk, and
            // no file again for this capture.
            tracing::warn!("exec capture: writing the spill file failed; kept in memory");
            let mut back = Vec::new();
            if file.seek(SeekFrom::Start(0)).is_err()
                || Read::by_ref(file)
                    .take(before)
                    .read_to_end(&mut back)
                    .is_err()
            {
                tracing::warn!("exec capture: reading the spill file back failed");
            }
            back.resize(before as usize, 0);
            self.memory = back;
            self.file = None;
            self.no_file = true;
        }
        self.memory.extend_from_slice(chunk);
        if self.memory.len() > IN_MEMORY
            && !self.no_file
            && let Ok((_, path)) = self.spills.create("exec-raw")
            && let Ok(mut file) = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
            // Nobody else needs the raw bytes: the file goes when its handle does.
            && std::fs::remove_file(&path).is_ok()
            && file.write_all(&self.memory).is_ok()
        {
            self.memory = Vec::new();
            self.file = Some(file);
        } else if self.memory.len() > IN_MEMORY {
            // No file could be made or written (a full disk): not asked again at every chunk.
            self.no_file = true;
        }
    }

    /// How many bytes were captured.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// The captured bytes between two absolute positions (clamped).
    pub(super) fn range(&mut self, from: u64, to: u64) -> Vec<u8> {
        let from = from.saturating_sub(self.start).min(self.len);
        let to = to.saturating_sub(self.start).min(self.len).max(from);
        match &mut self.file {
            None => self.memory[from as usize..to as usize].to_vec(),
            Some(file) => {
                let mut out = vec![0; (to - from) as usize];
                let ok = file.flush().is_ok()
                    && file.seek(SeekFrom::Start(from)).is_ok()
                    && file.read_exact(&mut out).is_ok();
                let _ = file.seek(SeekFrom::End(0));
                if !ok {
                    out.clear();
                }
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_in_memory_and_after_spilling() {
        let spills = Arc::new(Spills::new(crate::config::DEFAULT_MAX_SPILL_BYTES));
        let mut c = ExecCapture::new(100, spills);
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.range(106, 111), b"world");
        assert_eq!(c.range(0, 103), b"hel");
        let big = vec![b'x'; IN_MEMORY];
        c.push(&big);
        c.push(b"tail");
        let end = 100 + 11 + IN_MEMORY as u64 + 4;
        assert_eq!(c.range(end - 4, end), b"tail");
        assert_eq!(c.range(100, 105), b"hello");
    }

    #[test]
    fn a_spill_file_that_cannot_be_written_gives_way_to_memory() {
        let spills = Arc::new(Spills::new(crate::config::DEFAULT_MAX_SPILL_BYTES));
        let mut c = ExecCapture::new(0, spills);
        c.push(b"abc");
        // As spilled, to a file every write to fails (a full disk; reading it gives zeros).
        c.memory.clear();
        c.file = Some(
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/full")
                .unwrap(),
        );
        c.push(b"tail");
        assert!(c.file.is_none() && c.no_file);
        assert_eq!(c.len(), 7);
        assert_eq!(c.range(3, 7), b"tail");
        // Memory only from now on, past the threshold too.
        c.push(&vec![b'x'; IN_MEMORY + 1]);
        assert!(c.file.is_none());
        assert_eq!(c.range(7, 8), b"x");
    }
}
