//! The agent's sentences for the core's [`Fault`]s: the failures whose next step names a
//! tool or a parameter, which only the face knows how to spell.

use termpilot_core::Fault;

/// The one sentence the agent gets for `f`: what was wrong and which tool or parameter to use.
pub fn sentence(f: &Fault) -> String {
    match f {
        Fault::NoMouse => "The program on screen has not enabled mouse reporting (a shell prompt never does), so a click would only type escape codes; use terminal_send_key or terminal_write instead, or click in a mouse-aware program (vim with `set mouse=a`, htop, fzf, lazygit…).".into(),
        Fault::NothingScrolls => "Nothing on this screen scrolls with the wheel: no program reports the mouse or uses the alternate screen (a shell prompt, or a pager run with -X); read earlier output with terminal_read view:screen and page:1, 2…, or press keys such as PageUp with terminal_send_key.".into(),
        Fault::PersonTyping { id, lease_secs } => format!(
            "A person is typing in session {id} (they took control from the web page), so your input was not sent; reads and waits still work: call terminal_wait (until quiet) or retry later, and control returns when they release it or after {lease_secs} s without a key."
        ),
        Fault::NotAShell { id } => format!(
            "Session {id} runs one program, not a shell; drive it with terminal_write and terminal_send_key."
        ),
        Fault::ProgramInForeground { id, program } => format!(
            "`{program}` is running in session {id}, so there is no prompt to type a command at; drive it with terminal_write / terminal_send_key, or wait for it with terminal_wait."
        ),
        Fault::CommandStillRunning { id } => format!(
            "A command is still running in session {id}; wait for it with terminal_wait, answer it with terminal_write, or interrupt it with terminal_send_key Ctrl+C."
        ),
        Fault::CommandTooLong { bytes, limit_kib } => format!(
            "`command` is {bytes} bytes, over the {limit_kib} KiB a command line may take; write it to a file with terminal_write_file and run `. FILE` (or `sh FILE`) instead."
        ),
        Fault::ProgramExited { id, how } => format!(
            "The program in session {id} has exited ({how}); read its last screen with terminal_read, or restart it with terminal_reset hardReset."
        ),
        Fault::InputNotRead => "The program has not read its input for 5 s (the terminal's input buffer is full); interrupt it with terminal_send_key Ctrl+C or stop the session.".into(),
        Fault::SessionLimit { open } => format!(
            "{open} sessions are open, the most this server allows; stop one with terminal_stop (terminal_list shows them) and try again."
        ),
        Fault::UnknownJob { id } => format!("No job is called `{id}`; call job_list to see the jobs."),
        Fault::NotAJobId { id } => format!(
            "`{id}` is not a job id; pass a jobId returned by job_start or listed by job_list."
        ),
        Fault::LockHeld {
            name,
            holder,
            held_for,
            waited_ms,
        } => {
            let waited = match waited_ms {
                None => "pass waitMs to wait for it".to_string(),
                Some(ms) => format!("waited {ms} ms; wait longer"),
            };
            format!(
                "Lock `{name}` is held by {holder} for {held_for}; {waited}, or ask its holder to call lock_release."
            )
        }
        Fault::WrongLockToken { name, holder } => format!(
            "That token does not hold lock `{name}` (it is held by {holder}); pass the token lock_acquire returned."
        ),
        Fault::WindowTitleMissing => {
            "target window needs windowTitle (a part of the window's title).".into()
        }
        Fault::WindowTitleEmpty => "windowTitle is empty; pass a part of the window's title.".into(),
        Fault::ScreenshotPath { path } => format!(
            "outputPath `{}` must be an absolute path ending in .png.",
            path.display()
        ),
        Fault::ScreenshotWrite { context, source } => {
            format!("{context}: {source}. Pass an outputPath in a writable folder.")
        }
        Fault::DesktopScreenshotUnsupported => "Desktop screenshots are not supported on this platform yet (X11 only); terminal_screenshot still captures a session.".into(),
        Fault::FileLockersUnsupported => "file_lockers is not supported on this platform yet (Linux and Windows only); use `lsof` through terminal_run.".into(),
        Fault::EditEmptyText => "`oldText` is empty; pass the exact text to replace.".into(),
        Fault::EditMissingFile { path } => format!(
            "`{}` does not exist; edit_file changes existing files, terminal_write_file creates new ones.",
            path.display()
        ),
        Fault::EditTooLarge {
            path,
            mib,
            limit_mib,
        } => format!(
            "`{}` is {mib} MiB, over edit_file's limit of {limit_mib} MiB; the file is unchanged. Edit it with a program in a session instead.",
            path.display()
        ),
        Fault::EditGrew { path, limit_mib } => format!(
            "`{}` grew past edit_file's limit of {limit_mib} MiB while being read; the file is unchanged.",
            path.display()
        ),
        Fault::EditNotText { path } => format!(
            "`{}` is not UTF-8 text, so it cannot be edited as text; rewrite it with terminal_write_file instead.",
            path.display()
        ),
        Fault::EditNoMatch { path } => format!(
            "`oldText` was not found in `{}` (0 matches); the file is unchanged. Check whitespace and line endings, or read the file first.",
            path.display()
        ),
        Fault::EditManyMatches { path, count } => format!(
            "`oldText` matches {count} times in `{}`; the file is unchanged. Include more surrounding text to make it unique, or pass replaceAll true.",
            path.display()
        ),
        Fault::RelativePath { path } => format!(
            "`{path}` is a relative path; pass an absolute path, or a sessionId to resolve it against that session's directory."
        ),
        Fault::MissingDirectory { dir } => format!(
            "The directory `{}` does not exist; create it or pass createDirs true.",
            dir.display()
        ),
        Fault::HardLinks { path, links } => format!(
            "`{}` has {links} hard links; replacing it would leave the other names with the old contents. Pass breakLinks true to replace this name only, or append instead.",
            path.display()
        ),
        Fault::ProgramNotFound { program, .. } => format!(
            "`{program}` was not found; check the name, pass its absolute path, or set shell:true for shell builtins."
        ),
        Fault::CommandSessionReleased { .. } => {
            format!("{f} Start it again with terminal_start.")
        }
        Fault::JobBinaryWritable { binary } => format!(
            "Jobs cannot start sandboxed while the termpilot binary `{}` lies where sandboxed processes can write (a job outlives the server and starts through that file); ask the person running termpilot to install it outside the write roots, or use terminal_run or a session instead.",
            binary.display()
        ),
    }
}

/// The agent's sentence for any core error: a [`Fault`]'s from [`sentence`], the rest as the
/// core words them.
pub fn message(e: &termpilot_core::Error) -> String {
    match e {
        termpilot_core::Error::Fault(f) => sentence(f),
        termpilot_core::Error::UnknownSession(id) => format!(
            "No session is called `{id}`. Call terminal_list to see the sessions, or terminal_start to open one."
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_is_told_which_tool_or_parameter_comes_next() {
        let held = Fault::LockHeld {
            name: "db".into(),
            holder: "pid 7".into(),
            held_for: "1.0 s".into(),
            waited_ms: None,
        };
        assert!(sentence(&held).contains("pass waitMs"));
        assert!(sentence(&held).ends_with("call lock_release."));
        let waited = Fault::LockHeld {
            name: "db".into(),
            holder: "pid 7".into(),
            held_for: "1.0 s".into(),
            waited_ms: Some(250),
        };
        assert!(sentence(&waited).contains("waited 250 ms; wait longer"));
        let e = termpilot_core::Error::from(Fault::UnknownJob { id: "j1".into() });
        assert_eq!(
            message(&e),
            "No job is called `j1`; call job_list to see the jobs."
        );
        // The core's own words name no tool.
        assert!(!e.to_string().contains("job_list"));
    }
}
