//! The session host's memory at rest.
//!
//! The host lives as long as its sessions, mostly doing nothing; what it keeps resident then
//! is mostly code it ran once (the calls that started and drove its sessions), memory the
//! allocator kept, and stack pages deep calls once touched. Once its sessions have been quiet
//! for [`QUIET`] (no call, no output, no person: their idle clock), [`settle`] gives them
//! back, and again as the quiet spell goes on ([`Schedule`]: after 1 s, 2 s, 4 s, … of quiet,
//! then every [`MAX_GAP`]), since what runs now and then at rest (a blocking-pool thread
//! ending after 10 s, the idle sweep each minute) maps code of its own once more:
//!
//! - `madvise(MADV_DONTNEED)` over each read-only, file-backed private mapping (`r-xp` code,
//!   `r--p` constants; the binary's and the shared libraries') that holds **no anonymous
//!   page** (`Anonymous: 0 kB` in `/proc/self/smaps`: no page of it was ever written, so
//!   every page equals the file's). This removes those pages from the host's page tables
//!   only: they stay in the page cache, and the next instruction or read that needs one maps
//!   it back from there (a minor fault) — exactly what happens when the kernel reclaims clean
//!   file pages under memory pressure. Mappings written to (relocated RELRO data, `rw-p`
//!   data, heaps, stacks) are never touched, so no content can be lost. The kernel maps back
//!   the 64 KiB around each page touched, so what the host runs at rest is laid out together
//!   in the binary (`scripts/link-order` profiles the host at rest first).
//! - [`trim_stack`] on the calling thread (the host's loop) and, through a task, on the
//!   runtime's worker: the stack pages below the caller's frame hold nothing live (a stack
//!   grows down; they are what calls that returned left), and come back zeroed if a deeper
//!   call needs them.
//! - `malloc_trim(0)`, last (after the buffers of this very pass are freed): the allocator
//!   returns the free pages of its heaps to the kernel.
//!
//! What stays resident is what the host runs while at rest (its tick, the idle sweep, the
//! readers of idle sessions) and the sessions' own state (screen, scrollback, history, log).

use std::time::Duration;

/// How long the sessions must have been quiet before the host first settles.
pub const QUIET: Duration = Duration::from_secs(1);
/// The longest a quiet spell goes between two settles.
pub const MAX_GAP: Duration = Duration::from_secs(600);

/// When to settle in a quiet spell: at [`QUIET`], then each time the spell has doubled in
/// length (at most [`MAX_GAP`] later); a call, output or person starts it over.
#[derive(Debug)]
pub struct Schedule {
    /// The quiet time of the next settle (none left in this spell: `None`).
    next: Option<Duration>,
    last: Duration,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            next: Some(QUIET),
            last: Duration::ZERO,
        }
    }
}

impl Schedule {
    /// True when the host should settle now, its sessions having been quiet for `quiet_for`
    /// (asked at every tick).
    pub fn due(&mut self, quiet_for: Duration) -> bool {
        if quiet_for < self.last {
            // Something happened since the last tick: a new quiet spell.
            self.next = Some(QUIET);
        }
        self.last = quiet_for;
        match self.next {
            Some(next) if quiet_for >= next => {
                self.next = quiet_for
                    .checked_add(MAX_GAP)
                    .map(|gap| quiet_for.saturating_mul(2).min(gap));
                true
            }
            _ => false,
        }
    }
}

/// Gives back the memory the host does not use at rest (see the module doc); how many
/// bytes of mappings were dropped.
pub fn settle() -> usize {
    #[cfg(target_os = "linux")]
    {
        let mut dropped = 0;
        // Read line by line: the whole text would be a buffer of its own on the heap.
        if let Ok(smaps) = std::fs::File::open("/proc/self/smaps") {
            for (start, end) in clean_read_only(std::io::BufReader::new(smaps)) {
                // SAFETY: a range of this process's own read-only private file mapping with
                // no anonymous page: its pages equal the file's, and fault back in from the
                // page cache when used (module doc).
                if unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED)
                } == 0
                {
                    dropped += end - start;
                }
            }
        }
        trim_stack();
        // SAFETY: malloc_trim only returns free memory of the allocator's own heaps.
        unsafe { libc::malloc_trim(0) };
        dropped
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// What [`trim_stack`] leaves below the caller's frame: room for the `madvise` call itself,
/// many times over.
#[cfg(target_os = "linux")]
const STACK_MARGIN: usize = 16 * 1024;

/// Gives back the pages of the calling thread's stack below the caller's frame (and a
/// margin); how many bytes. Only this thread's own stack, whose pages below its current
/// frame hold nothing live: a deeper call later gets them back zeroed, as a new thread does.
#[inline(never)]
pub fn trim_stack() -> usize {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let here = std::hint::black_box(0u8);
        let frame = std::ptr::addr_of!(here) as usize;
        let Some(low) = stack_low() else { return 0 };
        let page = 4096;
        let high = frame.saturating_sub(STACK_MARGIN) & !(page - 1);
        if high <= low {
            return 0;
        }
        // SAFETY: [low, high) lies in this thread's own stack, below its current frame by
        // more than any call made from here uses: no live data (see the doc above). For the
        // main thread `low` may lie below the stack's mapping (it can still grow there):
        // the part not mapped is skipped (the call then says ENOMEM, which is ignored).
        unsafe { libc::madvise(low as *mut libc::c_void, high - low, libc::MADV_DONTNEED) };
        high - low
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    0
}

/// The lowest address of the calling thread's stack (its guard page excluded).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn stack_low() -> Option<usize> {
    // SAFETY: the attribute is initialised by pthread_getattr_np before it is read, and
    // destroyed once; the out-pointers are locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        (ok && !addr.is_null()).then_some(addr as usize)
    }
}

/// The `(start, end)` of every mapping in `smaps` that is read-only (`r-xp` or `r--p`),
/// backed by a file that still exists, and holds no anonymous page.
fn clean_read_only(smaps: impl std::io::BufRead) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let Ok(line) = line else { break };
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
            clean_read_only(smaps.as_bytes()),
            vec![(0x55d0, 0x55e0), (0x55e0, 0x55f0)]
        );
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn a_quiet_spell_settles_at_one_second_then_each_time_it_doubles() {
        let mut schedule = Schedule::default();
        let ticks = [0.5, 1.0, 1.5, 2.0, 2.5, 3.5, 4.0, 7.5, 8.0, 15.5, 16.5];
        let settled: Vec<f64> = ticks
            .into_iter()
            .filter(|&t| schedule.due(secs(t)))
            .collect();
        assert_eq!(settled, [1.0, 2.0, 4.0, 8.0, 16.5]);
    }

    #[test]
    fn a_long_quiet_spell_settles_every_ten_minutes_and_activity_starts_over() {
        let mut schedule = Schedule::default();
        assert!(schedule.due(secs(1000.0)));
        assert!(!schedule.due(secs(1599.0)));
        assert!(schedule.due(secs(1600.0)));
        // A call: the sessions' quiet clock starts again, and so does the schedule.
        assert!(!schedule.due(secs(0.5)));
        assert!(schedule.due(secs(1.0)));
    }

    #[test]
    fn no_session_at_all_settles_once() {
        let mut schedule = Schedule::default();
        assert!(schedule.due(Duration::MAX));
        assert!(!schedule.due(Duration::MAX));
    }

    #[test]
    fn the_stack_below_the_callers_frame_is_given_back_and_deeper_calls_still_work() {
        // Touch a deep frame, give back what lies below this one, then use it again.
        #[inline(never)]
        fn deep(n: usize) -> u64 {
            let buf = std::hint::black_box([n as u8; 32 * 1024]);
            buf.iter().map(|&b| b as u64).sum()
        }
        let touched = deep(7);
        std::thread::spawn(move || {
            assert_eq!(deep(3), 3 * 32 * 1024);
            let given = trim_stack();
            if cfg!(all(target_os = "linux", target_env = "gnu")) {
                assert!(given > 0, "nothing of this thread's stack was given back");
            }
            // A deeper call still works, on pages that come back.
            assert_eq!(deep(5), 5 * 32 * 1024);
        })
        .join()
        .unwrap();
        assert_eq!(touched, 7 * 32 * 1024);
    }
}
