//! Bracketed paste: pasted text wrapped in `ESC [200~ … ESC [201~` for a program that asked
//! for it (mode 2004), with every paste marker inside the text removed first, so pasted text
//! can never end the paste early and have its remainder read as typed keys.

/// The markers a program's input parser reads as the start and end of a paste: the 7-bit
/// forms, and the 8-bit CSI (U+009B) forms a UTF-8 terminal may also honour.
const MARKERS: [&str; 4] = ["\x1b[200~", "\x1b[201~", "\u{9b}200~", "\u{9b}201~"];

/// `body` with every paste marker removed, repeatedly (removing one must not join the text
/// around it into another).
pub(super) fn strip_markers(body: &str) -> String {
    let mut out = body.to_string();
    while let Some(m) = MARKERS.iter().find(|m| out.contains(**m)) {
        out = out.replace(m, "");
    }
    out
}

/// `body` as one bracketed paste, its own markers stripped.
pub(super) fn bracketed(body: &str) -> String {
    format!("\x1b[200~{}\x1b[201~", strip_markers(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_inside_the_text_are_removed() {
        assert_eq!(
            bracketed("safe\x1b[201~injected"),
            "\x1b[200~safeinjected\x1b[201~"
        );
        assert_eq!(strip_markers("a\x1b[200~b\u{9b}201~c"), "abc");
        // Removing the inner marker must not leave an outer one behind.
        assert_eq!(strip_markers("x\x1b[20\x1b[201~1~y"), "xy");
        assert_eq!(
            strip_markers("plain \x1b[1mbold\x1b[0m"),
            "plain \x1b[1mbold\x1b[0m"
        );
    }
}
