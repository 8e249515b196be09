//! The session host's memory at rest.
//!
//! The host lives as long as its sessions, mostly doing nothing; what it keeps resident then
//! is mostly code it ran once (the calls that started and drove its sessions) and memory the
//! allocator kept. Once its sessions have been quiet for [`QUIET`] (no call, no output, no
//! person: their idle clock), [`settle`] gives both back, once per quiet spell:
//!
//! - `malloc_trim(0)`: the allocator returns the free pages of its heaps to the kernel.
//! - `madvise(MADV_DONTNEED)` over each read-only, file-backed private mapping (`r-xp` code,
//!   `r--p` constants; the binary's and the shared libraries') that holds **no anonymous
//!   page** (`Anonymous: 0 kB` in `/proc/self/smaps`: no page of it was ever written, so
//!   every page equals the file's). This removes those pages from the host's page tables
//!   only: they stay in the page cache, and the next instruction or read that needs one maps
//!   it back from there (a minor fault) — exactly what happens when the kernel reclaims clean
//!   file pages under memory pressure. Mappings written to (relocated RELRO data, `rw-p`
//!   data, heaps, stacks) are never touched, so no content can be lost.
//!
//! What stays resident is what the host runs while at rest (its tick, the idle sweep, the
//! readers of idle sessions).

use std::time::Duration;

/// How long the sessions must have been quiet before the host settles.
pub const QUIET: Duration = Duration::from_secs(1);

/// Gives back the memory the host does not use at rest (see the module doc); how many
/// bytes of mappings were dropped.
pub fn settle() -> usize {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: malloc_trim only returns free memory of the allocator's own heaps.
        unsafe { libc::malloc_trim(0) };
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
            return 0;
        };
        let mut dropped = 0;
        for (start, end) in clean_read_only(&smaps) {
            // SAFETY: a range of this process's own read-only private file mapping with no
            // anonymous page: its pages equal the file's, and fault back in from the page
            // cache when used (module doc).
            if unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED)
            } == 0
            {
                dropped += end - start;
            }
        }
        dropped
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// The `(start, end)` of every mapping in `smaps` that is read-only (`r-xp` or `r--p`),
/// backed by a file that still exists, and holds no anonymous page.
fn clean_read_only(smaps: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if let Some((a, b)) = first.split_once('-')
            && let (Ok(start), Ok(end)) =
                (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            let perms = words.next().unwrap_or("");
            let path = words.nth(3).unwrap_or("");
            let deleted = line.ends_with("(deleted)");
            current = (matches!(perms, "r-xp" | "r--p") && path.starts_with('/') && !deleted)
                .then_some((start, end));
        } else if first == "Anonymous:"
            && let Some(range) = current.take()
            && words.next() == Some("0")
        {
            out.push(range);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unwritten_read_only_file_mappings_are_picked() {
        let smaps = "\
55d0-55e0 r--p 00000000 08:01 12 /usr/bin/termpilot
Rss:                  12 kB
Anonymous:             0 kB
55e0-55f0 r-xp 00010000 08:01 12 /usr/bin/termpilot
Anonymous:             0 kB
55f0-5600 r--p 00020000 08:01 12 /usr/bin/termpilot
Anonymous:             8 kB
5600-5610 rw-p 00030000 08:01 12 /usr/bin/termpilot
Anonymous:             0 kB
7f00-7f10 r-xp 00000000 00:00 0 [vdso]
Anonymous:             0 kB
7f10-7f20 r-xp 00000000 08:01 13 /old/libc.so (deleted)
Anonymous:             0 kB
7f20-7f30 ---p 00000000 00:00 0
Anonymous:             0 kB
";
        assert_eq!(
            clean_read_only(smaps),
            vec![(0x55d0, 0x55e0), (0x55e0, 0x55f0)]
        );
    }
}
