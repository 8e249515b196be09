//! Finds OSC 133 and OSC 7 marks in the output stream, across chunk boundaries, and says
//! at which absolute output position each one sits.
//!
//! Our hooks sign every OSC 133 mark with the session's nonce (`133;A;tp=<nonce>`,
//! `133;D;<status>;tp=<nonce>`): a mark carries [`Mark::signed`] only when it holds that
//! nonce, so a program (or a `cat` of a log) that prints marks of its own is told apart from
//! the shell's hook.

/// What a mark says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MarkKind {
    /// `A`: the prompt starts.
    PromptStart,
    /// `B`: the prompt ended; the command line follows.
    CommandStart,
    /// `C`: the command's output starts.
    OutputStart,
    /// `D;<status>`: the command ended.
    CommandEnd(Option<i32>),
    /// OSC 7: the shell's working directory.
    Cwd(String),
}

/// A mark and where it is: `start` is the position of its ESC, `end` just after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mark {
    pub kind: MarkKind,
    pub start: u64,
    pub end: u64,
    /// The mark carries this session's nonce: the shell's hook printed it. (OSC 7 carries
    /// none; the session trusts it by where it stands.)
    pub signed: bool,
}

/// Longest OSC payload looked at; longer strings are not marks.
const MAX_PAYLOAD: usize = 4096;

#[derive(Debug, Default)]
enum State {
    #[default]
    Ground,
    Escape,
    Osc,
    OscEscape,
}

/// A streaming scanner.
#[derive(Debug, Default)]
pub(crate) struct Scanner {
    state: State,
    payload: Vec<u8>,
    start: u64,
    /// `tp=<nonce>`: the parameter that signs the hook's marks.
    signature: Option<String>,
}

impl Scanner {
    /// A scanner that recognises marks signed with `nonce`.
    pub(crate) fn signed_with(nonce: &str) -> Scanner {
        Scanner {
            signature: Some(format!("tp={nonce}")),
            ..Scanner::default()
        }
    }

    /// Scans a chunk that begins at absolute position `at`.
    pub(crate) fn feed(&mut self, bytes: &[u8], at: u64, marks: &mut Vec<Mark>) {
        let mut i = 0;
        while i < bytes.len() {
            // Outside a sequence only ESC matters: jump to the next one.
            if matches!(self.state, State::Ground) {
                match memchr::memchr(0x1b, &bytes[i..]) {
                    Some(k) => i += k,
                    None => return,
                }
            }
            let b = bytes[i];
            let pos = at + i as u64;
            i += 1;
            match self.state {
                State::Ground => {
                    if b == 0x1b {
                        self.state = State::Escape;
                        self.start = pos;
                    }
                }
                State::Escape => {
                    if b == b']' {
                        self.state = State::Osc;
                        self.payload.clear();
                    } else {
                        self.state = State::Ground;
                    }
                }
                State::Osc => match b {
                    0x07 => self.finish(pos + 1, marks),
                    0x1b => self.state = State::OscEscape,
                    _ if self.payload.len() < MAX_PAYLOAD => self.payload.push(b),
                    _ => self.state = State::Ground,
                },
                State::OscEscape => {
                    if b == b'\\' {
                        self.finish(pos + 1, marks);
                    } else {
                        // A new escape sequence interrupted the string.
                        self.start = pos - 1;
                        self.state = if b == b']' {
                            self.payload.clear();
                            State::Osc
                        } else {
                            State::Ground
                        };
                    }
                }
            }
        }
    }

    fn finish(&mut self, end: u64, marks: &mut Vec<Mark>) {
        self.state = State::Ground;
        let payload = String::from_utf8_lossy(&self.payload);
        let mut signed = false;
        let kind = if let Some(rest) = payload.strip_prefix("133;") {
            signed = self
                .signature
                .as_deref()
                .is_some_and(|sig| rest.split(';').skip(1).any(|p| p == sig));
            let mut parts = rest.split(';');
            match parts.next() {
                Some("A") => Some(MarkKind::PromptStart),
                Some("B") => Some(MarkKind::CommandStart),
                Some("C") => Some(MarkKind::OutputStart),
                Some("D") => Some(MarkKind::CommandEnd(
                    parts
                        .next()
                        .filter(|s| !s.starts_with("tp="))
                        .and_then(|s| s.trim().parse().ok()),
                )),
                _ => None,
            }
        } else {
            payload
                .strip_prefix("7;")
                .and_then(cwd_from_url)
                .map(MarkKind::Cwd)
        };
        if let Some(kind) = kind {
            marks.push(Mark {
                kind,
                start: self.start,
                end,
                signed,
            });
        }
    }
}

/// `file://host/path%20with%20spaces` → `/path with spaces`.
fn cwd_from_url(url: &str) -> Option<String> {
    let rest = url.strip_prefix("file://")?;
    let path = &rest[rest.find('/')?..];
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(v) = u8::from_str_radix(&path[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(chunks: &[&[u8]]) -> Vec<Mark> {
        let mut s = Scanner::default();
        let mut marks = Vec::new();
        let mut at = 0;
        for c in chunks {
            s.feed(c, at, &mut marks);
            at += c.len() as u64;
        }
        marks
    }

    #[test]
    fn finds_marks_with_positions() {
        let m = scan(&[b"\x1b]133;C\x07hi\r\n\x1b]133;D;42\x07\x1b]7;file://box/tmp/a%20b\x1b\\"]);
        assert_eq!(
            m[0],
            Mark {
                kind: MarkKind::OutputStart,
                start: 0,
                end: 8,
                signed: false,
            }
        );
        assert_eq!(m[1].kind, MarkKind::CommandEnd(Some(42)));
        assert_eq!(m[1].start, 12);
        assert_eq!(m[2].kind, MarkKind::Cwd("/tmp/a b".into()));
    }

    #[test]
    fn marks_split_across_chunks() {
        let m = scan(&[b"x\x1b]13", b"3;D;", b"1\x07"]);
        assert_eq!(
            m,
            vec![Mark {
                kind: MarkKind::CommandEnd(Some(1)),
                start: 1,
                end: 11,
                signed: false,
            }]
        );
    }

    #[test]
    fn only_marks_with_the_nonce_are_signed() {
        let mut s = Scanner::signed_with("abc");
        let mut m = Vec::new();
        s.feed(
            b"\x1b]133;D;3;tp=abc\x07\x1b]133;D;0\x07\x1b]133;A;tp=abd\x07\x1b]133;B;tp=abc\x07",
            0,
            &mut m,
        );
        let got: Vec<_> = m.iter().map(|m| (m.kind.clone(), m.signed)).collect();
        assert_eq!(
            got,
            vec![
                (MarkKind::CommandEnd(Some(3)), true),
                (MarkKind::CommandEnd(Some(0)), false),
                (MarkKind::PromptStart, false),
                (MarkKind::CommandStart, true),
            ]
        );
        let mut m = Vec::new();
        Scanner::signed_with("abc").feed(b"\x1b]133;D;tp=abc\x07", 0, &mut m);
        assert_eq!(m[0].kind, MarkKind::CommandEnd(None));
    }

    #[test]
    fn other_escapes_are_not_marks() {
        assert!(scan(&[b"\x1b[31mred\x1b]0;title\x07\x1b]133;Z\x07"]).is_empty());
    }
}
