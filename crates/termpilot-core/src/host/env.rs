//! The environment every child of termpilot starts with (SPEC §4): no pagers, no prompts.
//!
//! A caller's own `env` is applied after these, so it overrides them.

/// Variables set for every child process, before the caller's own.
#[cfg(unix)]
pub(crate) const CHILD_ENV: &[(&str, &str)] = &[
    ("TERM", "xterm-256color"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("LESS", "-FRX"),
    ("DEBIAN_FRONTEND", "noninteractive"),
];

/// Variables set for every child process, before the caller's own.
#[cfg(windows)]
pub const CHILD_ENV: &[(&str, &str)] = &[
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("PYTHONIOENCODING", "utf-8"),
];
