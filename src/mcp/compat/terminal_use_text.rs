//! `--compat terminal-use`: the preset's prose, in the words upstream terminal-use answers
//! with (its tools' results and errors, which its own tests quote).
//!
//! Pure formatting: a screen read from the core becomes the `Terminal: 70x18, cursor at …`
//! line and the `Showing rows …` window; a settle, an exit, a session line and the core's
//! error sentences become upstream's. Where upstream reports a figure termpilot does not
//! keep (its buffer's line count), the line says what termpilot knows instead.

use termpilot_core::session::Exit;
use termpilot_core::session::ScreenText;

/// The marker the core draws at the cursor.
const CURSOR_MARKER: char = '▌';

/// `Terminal: 70x18 (alt buffer active), cursor at row=3 col=5 (hidden), 2 pages of
/// scrollback above.` (row and col 1-based, as terminal_click takes them).
pub fn state_line(s: &ScreenText) -> String {
    let alt = if s.alt_screen {
        " (alt buffer active)"
    } else {
        ""
    };
    let hidden = if s.cursor.visible { "" } else { " (hidden)" };
    format!(
        "Terminal: {}x{}{alt}, cursor at row={} col={}{hidden}, {} page{} of scrollback above.",
        s.cols,
        s.rows,
        s.cursor.row,
        s.cursor.col,
        s.pages_back,
        if s.pages_back == 1 { "" } else { "s" }
    )
}

/// The window upstream's reads end with: a header, the text between `---` lines, and the
/// highlighted items (or the pointer to a screenshot). `joined` counts the screen rows that
/// were soft-wrapped continuations joined to the line before.
pub fn window(s: &ScreenText, cursor_shown: bool, joined: usize) -> String {
    let lines: Vec<&str> = if s.text.is_empty() {
        Vec::new()
    } else {
        s.text.split('\n').collect()
    };
    if lines.is_empty() {
        return "(empty buffer)".into();
    }
    let marked = cursor_shown && s.cursor.visible && s.text.contains(CURSOR_MARKER);
    let cursor_note = if marked {
        match s.cursor.char.as_deref().filter(|c| !c.trim().is_empty()) {
            Some(c) => format!(
                "; cursor marked with \"{CURSOR_MARKER}\", inserted in front of the {} it is on",
                serde_json::to_string(c).unwrap_or_default()
            ),
            None => format!("; cursor marked with \"{CURSOR_MARKER}\""),
        }
    } else {
        String::new()
    };
    let joined_note = match joined {
        0 => String::new(),
        1 => "; 1 soft-wrapped row joined".into(),
        n => format!("; {n} soft-wrapped rows joined"),
    };
    let mut out = format!(
        "Showing rows 1..{} (page {} of {}, {} rows per page{joined_note}{cursor_note}):\n---\n{}\n---",
        lines.len(),
        s.page + 1,
        s.pages_back + 1,
        s.rows,
        lines.join("\n")
    );
    if !s.highlights.is_empty() {
        out.push_str(
            "\n\nHighlighted on screen (reverse video or background color; screen row, columns):",
        );
        for h in &s.highlights {
            out.push_str(&format!(
                "\n  row {}, cols {}-{}: {}",
                h.row,
                h.start_col,
                h.end_col,
                serde_json::to_string(&h.text).unwrap_or_default()
            ));
        }
    } else if let Some(why) = s.highlights_hint {
        let hint = crate::mcp::wire::screen::no_highlights(why);
        out.push_str(&format!("\n\n{hint}"));
    }
    out
}

/// The state line, a blank line and the window: what upstream's input tools end with.
pub fn screen_block(s: &ScreenText, cursor_shown: bool, joined: usize) -> String {
    format!("{}\n\n{}", state_line(s), window(s, cursor_shown, joined))
}

/// How an input call's wait for quiet went.
pub struct Settled {
    pub elapsed_ms: u128,
    pub bytes: u64,
    pub timed_out: bool,
    /// The caller asked for more than the 10 s cap.
    pub capped: bool,
}

/// `Settled in 212ms (35 bytes received).`, or the note that output was still coming.
pub fn settle_note(s: &Settled) -> String {
    if s.timed_out {
        format!(
            "Buffer was still active after {}ms ({} bytes received){}. Call `terminal_wait` to wait for the command to finish, or `terminal_read` to check on it.",
            s.elapsed_ms,
            s.bytes,
            if s.capped {
                " — maxWaitMs is capped at 10s here"
            } else {
                ""
            }
        )
    } else {
        format!(
            "Settled in {}ms ({} bytes received).",
            s.elapsed_ms, s.bytes
        )
    }
}

/// `exit code 3`, or `signal SIGKILL`.
pub fn exit_phrase(exit: &Exit) -> String {
    match (&exit.code, &exit.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "exit status unknown".into(),
    }
}

/// What upstream says when a shell session's shell went away during the call, with the
/// screen it left.
pub fn shell_exited(exit: Option<&Exit>, last_screen: &str) -> String {
    let code = exit
        .map(|e| format!(" ({})", exit_phrase(e)))
        .unwrap_or_default();
    let mut out = format!(
        "The shell exited during this call{code}. The next tool call against this sessionId will auto-respawn — re-issue your command if relevant."
    );
    let screen = last_screen.trim_end();
    if !screen.trim().is_empty() {
        out.push_str(&format!(
            "\n\nLast screen before the shell exited:\n---\n{screen}\n---"
        ));
    }
    out
}

/// `1 ("label")`, or `1`.
pub fn tag(id: &str, label: Option<&str>) -> String {
    match label {
        Some(l) => format!("{id} (\"{l}\")"),
        None => id.to_string(),
    }
}

/// The core's notice that a reserved id was started afresh, in upstream's words:
/// `Session 1 ("x")'s shell exited (exit code 7) …; a fresh shell has been spawned …`.
/// `None` when `message` is not that notice.
pub fn respawn_notice(message: &str, label: Option<&str>) -> Option<String> {
    let rest = message.strip_prefix("Session ")?;
    let (id, rest) = rest.split_once(" had ended (")?;
    let (why, after) = rest.split_once("); a fresh shell")?;
    let screen = after
        .split_once(" Its last screen was:\n")
        .map(|(_, s)| s)
        .unwrap_or("");
    let who = tag(id, label);
    let what = if let Some(how) = why.strip_prefix("its shell exited (") {
        let how = how.trim_end_matches(')');
        let how = how
            .strip_prefix("exit status ")
            .map(|c| format!("exit code {c}"))
            .unwrap_or_else(|| how.replace("killed by ", "signal "));
        format!("Session {who}'s shell exited ({how})")
    } else if let Some(idle) = why.strip_prefix("it was idle for more than ") {
        format!("Session {who} was terminated due to inactivity (idle for more than {idle})")
    } else if why.starts_with("it was evicted") {
        let cap = why
            .split("least recently used of ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .unwrap_or("?");
        format!(
            "Session {who} was evicted at the start of another session because the session cap ({cap}) was reached"
        )
    } else {
        format!("Session {who} ended ({why})")
    };
    let mut out = format!(
        "{what}. A fresh shell has been spawned under the same sessionId with the same size, shell, cwd and theme; this call's input was not sent — re-issue it."
    );
    let screen = screen.trim_end();
    if !screen.trim().is_empty() {
        out.push_str(&format!(
            "\n\nLast screen before the shell exited:\n---\n{screen}\n---"
        ));
    }
    Some(out)
}

/// The core's "no such session" sentence in upstream's words, `Unknown sessionId 999.`;
/// `None` for any other message.
pub fn unknown_session(message: &str, known: &[String]) -> Option<String> {
    let rest = message.strip_prefix("No session is called `")?;
    let id = rest.split('`').next()?;
    let known = if known.is_empty() {
        "(none)".to_string()
    } else {
        known.join(", ")
    };
    Some(format!(
        "Unknown sessionId {id}. Known: {known}. Call terminal_create to start a session."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn respawn_notices_read_as_upstream() {
        let n = respawn_notice(
            "Session 3 had ended (its shell exited (exit status 7)); a fresh shell of the same shape now runs under the same id, and this call did nothing: send it again. Its last screen was:\nfatal: out of cheese\n$",
            Some("x"),
        )
        .unwrap();
        assert!(
            n.starts_with("Session 3 (\"x\")'s shell exited (exit code 7)."),
            "{n}"
        );
        assert!(n.contains("A fresh shell has been spawned"), "{n}");
        assert!(
            n.contains("Last screen before the shell exited:\n---\nfatal: out of cheese\n$\n---"),
            "{n}"
        );
        let n = respawn_notice(
            "Session 1 had ended (it was evicted as the least recently used of 2 sessions when another was started); a fresh shell of the same shape now runs under the same id, and this call did nothing: send it again.",
            None,
        )
        .unwrap();
        assert!(
            n.contains("evicted at ") && n.contains("because the session cap (2)"),
            "{n}"
        );
        assert!(respawn_notice("Something else.", None).is_none());
    }

    #[test]
    fn unknown_sessions_name_the_id() {
        let e = unknown_session(
            "No session is called `999`. Call terminal_list to see the sessions, or terminal_start to open one.",
            &["1".into()],
        )
        .unwrap();
        assert!(e.starts_with("Unknown sessionId 999. Known: 1."), "{e}");
    }
}
