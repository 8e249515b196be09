//! DECRQSS (`ESC P $ q … ESC \`): the setting queries alacritty_terminal does not answer.
//!
//! Programs ask a terminal for a setting and wait for the answer; vim asks for the cursor
//! style (`$q q`) at start and, at exit, waits 100 ms for any answer still missing. A real
//! xterm answers every DECRQSS: `ESC P 1 $ r <setting> ESC \` for one it knows, `ESC P 0 $ r
//! ESC \` ("not recognised") otherwise. This scanner finds the queries in the output stream
//! (split anywhere across reads) so the emulator can answer them in their place among its
//! own answers. Only the cursor style is known here; every other request gets the
//! "not recognised" answer, which is what a program expects from a terminal without it.

/// Longest request kept (the known ones are one or two bytes).
const MAX_REQUEST: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Ground,
    /// After ESC.
    Esc,
    /// After `ESC P`, `ESC P $`: `n` bytes of the `$q` introducer matched.
    Intro(u8),
    /// In the request, collecting it.
    Request,
    /// ESC inside the request: `\` ends it.
    RequestEsc,
}

/// Finds DECRQSS requests in a byte stream.
#[derive(Debug, Default)]
pub(super) struct DcsQueries {
    state: State,
    request: Vec<u8>,
}

/// One request found: it ended at `end` (exclusive) in the chunk, and asks for `request`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Found {
    pub end: usize,
    pub request: Vec<u8>,
}

impl DcsQueries {
    /// Scans `bytes`, returning the requests that end in it, in order.
    pub(super) fn scan(&mut self, bytes: &[u8]) -> Vec<Found> {
        let mut found = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            // Most output is text: jump to the next ESC.
            if self.state == State::Ground {
                match memchr::memchr(0x1b, &bytes[i..]) {
                    Some(at) => i += at,
                    None => break,
                }
            }
            let b = bytes[i];
            self.state = match (self.state, b) {
                (_, 0x18 | 0x1a) => State::Ground, // CAN and SUB abort any sequence.
                (State::Ground, 0x1b) => State::Esc,
                (State::Ground, _) => State::Ground,
                (State::Esc, b'P') => State::Intro(0),
                (State::Esc, 0x1b) => State::Esc,
                (State::Esc, _) => State::Ground,
                (State::Intro(0), b'$') => State::Intro(1),
                (State::Intro(1), b'q') => {
                    self.request.clear();
                    State::Request
                }
                // Another DCS: not ours (its own ST returns to ground through Esc).
                (State::Intro(_), 0x1b) => State::Esc,
                (State::Intro(_), _) => State::Ground,
                (State::Request, 0x1b) => State::RequestEsc,
                (State::Request, _) if self.request.len() >= MAX_REQUEST => State::Ground,
                (State::Request, b) => {
                    self.request.push(b);
                    State::Request
                }
                (State::RequestEsc, b'\\') => {
                    found.push(Found {
                        end: i + 1,
                        request: std::mem::take(&mut self.request),
                    });
                    State::Ground
                }
                (State::RequestEsc, b'P') => State::Intro(0),
                (State::RequestEsc, _) => State::Ground,
            };
            i += 1;
        }
        found
    }
}

/// The answer to `request`, given the cursor style as DECSCUSR numbers it (1 blinking block,
/// 2 steady block, 3/4 underline, 5/6 bar).
pub(super) fn answer(request: &[u8], cursor_style: u8) -> Vec<u8> {
    match request {
        b" q" => format!("\x1bP1$r{cursor_style} q\x1b\\").into_bytes(),
        _ => b"\x1bP0$r\x1b\\".to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_requests_split_anywhere_and_skips_other_sequences() {
        let stream =
            b"a\x1bPzz\x1b\\\x1b[0%m\x1bP$q q\x1b\\\x1b[?12$p\x1bP+q6b75\x1b\\\x1bP$qm\x1b\\";
        let whole = DcsQueries::default().scan(stream);
        let requests: Vec<&[u8]> = whole.iter().map(|f| f.request.as_slice()).collect();
        assert_eq!(requests, [&b" q"[..], &b"m"[..]]);
        assert_eq!(
            &stream[..whole[0].end],
            b"a\x1bPzz\x1b\\\x1b[0%m\x1bP$q q\x1b\\"
        );
        for split in 1..stream.len() {
            let mut scanner = DcsQueries::default();
            let mut got = scanner.scan(&stream[..split]);
            got.extend(scanner.scan(&stream[split..]).into_iter().map(|f| Found {
                end: f.end + split,
                request: f.request,
            }));
            assert_eq!(got, whole, "split at {split}");
        }
    }

    #[test]
    fn answers_the_cursor_style_and_refuses_the_rest() {
        assert_eq!(answer(b" q", 2), b"\x1bP1$r2 q\x1b\\");
        assert_eq!(answer(b"r", 2), b"\x1bP0$r\x1b\\");
    }
}
