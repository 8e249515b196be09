//! The command state: the one owner of what a session's shell said with its marks (the
//! command phase, the marks themselves, the directory it reported) and of how its main
//! process ended, and the one place that answers what every wait asks of them.
//!
//! The reader feeds it every chunk ([`CommandState::on_output`]) and the end of output, the
//! waiter thread the exit; nothing else writes it. The questions, each asked with the facts of
//! one look ([`Seen`]: the time, whether the shell owns the terminal, the last output):
//!
//! | question | asked by | answer |
//! |---|---|---|
//! | has the program exited? ([`CommandState::program_end`]) | every wait, answer, batch | its exit is recorded, and its output reached its end or [`DRAIN_GRACE`] passed since; an end of output alone is not an exit (a program may close the terminal and go on) |
//! | is it leaving? ([`CommandState::program_leaving`]) | answer | its exit is recorded, or its output ended and the main process no longer runs: wait for the exit, not for quiet |
//! | has the command ended? ([`CommandState::command_end`], [`Follow`]) | exec, wait until exit | see [`Follow`]: by marks, else by the shell owning the terminal with output settled; or the program exited |
//! | does it still run? ([`CommandState::still_running`]) | interrupt | a program holds the terminal, or (with marks) no end with its next prompt ready since the baseline and the program has not exited |
//! | what ended since the input, with which status? ([`CommandState::exit_since_input`]) | answer, press, batch | a command session: its program's exit status; a shell: the status of a command that ran and ended since the write |
//! | is the shell back at its line editor? ([`CommandState::prompt_ready_since`]) | answer | a `B` mark since the write |
//! | is a command the shell started still open? ([`CommandState::command_open_since`]) | exec's input detection | by marks: running; a shell without `C`: no boundary since |
//! | busy? ([`CommandState::busy`]) | `terminal_list` | not exited, and a command session, a program in the foreground, or a command running by marks |
//!
//! Every answer is a [`Verdict`]: yes (with what ended), or not yet with the time a look is
//! due again (the settle time, the drain grace, the foreground re-check the kernel does not
//! announce); output and the exit wake waiters by themselves.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::integration::{Mark, MarkKind, Scanner};
use super::phase::{Baseline, CommandPhase};
use super::terminal::Exit;
use super::wait::{FOREGROUND_RECHECK, SETTLE};

/// How long after its exit a program's output may still be arriving.
pub(super) const DRAIN_GRACE: Duration = Duration::from_millis(100);

/// Most marks kept.
const MAX_MARKS: usize = 512;

/// What a look saw outside the state: asked of the kernel and the clock at that look.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen {
    pub now: Instant,
    /// The terminal's foreground group is the shell's (or unknown): no program holds it.
    pub shell_owns: bool,
    /// When output last arrived.
    pub last_output: Instant,
}

/// An answer: yes, or not yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict<T> {
    Yes(T),
    /// Not yet; look again at this time at the latest (output and the exit wake a wait too).
    LookAt(Instant),
    /// Not yet; look again at the next event.
    No,
}

impl<T> Verdict<T> {
    /// This answer, or else `other`'s: yes wins, then the earlier look.
    fn or(self, other: Verdict<T>) -> Verdict<T> {
        match (self, other) {
            (Verdict::Yes(v), _) | (_, Verdict::Yes(v)) => Verdict::Yes(v),
            (Verdict::LookAt(a), Verdict::LookAt(b)) => Verdict::LookAt(a.min(b)),
            (Verdict::LookAt(a), Verdict::No) | (Verdict::No, Verdict::LookAt(a)) => {
                Verdict::LookAt(a)
            }
            (Verdict::No, Verdict::No) => Verdict::No,
        }
    }

    pub(super) fn map<U>(self, f: impl FnOnce(T) -> U) -> Verdict<U> {
        match self {
            Verdict::Yes(v) => Verdict::Yes(f(v)),
            Verdict::LookAt(at) => Verdict::LookAt(at),
            Verdict::No => Verdict::No,
        }
    }

    /// When a look is due again, if a timer must wake it.
    pub(super) fn look_at(&self) -> Option<Instant> {
        match self {
            Verdict::LookAt(at) => Some(*at),
            _ => None,
        }
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct End {
    /// Where its output ends (its ending mark), when marks told; else the output's end.
    pub to: Option<u64>,
    /// Its exit status, when known.
    pub status: Option<i32>,
    /// The session's main process exited (the program of a command session, or the shell).
    pub exit: Option<Exit>,
}

/// Which end a wait follows, from where it began; kept across its looks.
#[derive(Debug, Clone)]
pub(crate) struct Follow {
    base: Baseline,
    what: Following,
    /// When the wait began.
    started: Instant,
    /// Since when the shell has owned the terminal at every look (typed, without marks).
    owned_since: Option<Instant>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Following {
    /// A command typed after the baseline (`terminal_exec`). With marks (`marks`): its end
    /// with the next prompt ready; an end with no prompt after it once the shell owns the
    /// terminal and output settled [`SETTLE`]. Without: once its echo came back (`echoed`),
    /// the shell owns the terminal at two looks [`SETTLE`] apart and output settled.
    Typed { marks: bool },
    /// Whatever runs now (`terminal_wait` until exit in a shell): nothing runs by marks, the
    /// shell owns the terminal, and the next prompt came since the baseline or output
    /// settled [`SETTLE`].
    Current,
    /// A command session's program: its exit.
    Program,
}

impl Follow {
    /// `terminal_exec`'s command, typed just after `base`; `marks` when the shell marks its
    /// commands.
    pub(super) fn typed(base: Baseline, marks: bool, started: Instant) -> Self {
        Follow::new(base, Following::Typed { marks }, started)
    }

    /// What runs now: the command in a shell, or a command session's program.
    pub(super) fn current(base: Baseline, command_session: bool, started: Instant) -> Self {
        let what = match command_session {
            true => Following::Program,
            false => Following::Current,
        };
        Follow::new(base, what, started)
    }

    fn new(base: Baseline, what: Following, started: Instant) -> Self {
        Follow {
            base,
            what,
            started,
            owned_since: None,
        }
    }
}

/// A shell's marks, its command phase and its main process's end (see the module doc).
pub(crate) struct CommandState {
    scanner: Scanner,
    /// Only signed marks count (the shell runs our hooks).
    signed: bool,
    /// Where the shell is by its marks (`phase.rs`).
    phase: CommandPhase,
    /// Marks seen lately (OSC 133 / OSC 7), oldest first.
    marks: VecDeque<Mark>,
    /// How many marks were ever seen (the first kept is number `marks_seen - marks.len()`).
    marks_seen: u64,
    /// The phase just before each kept mark (same order as `marks`): where a reader that
    /// starts at an output position began.
    phase_before: VecDeque<CommandPhase>,
    /// The working directory the shell last reported (OSC 7).
    reported_cwd: Option<String>,
    exit: Option<Exit>,
    /// When `exit` was recorded.
    exited_at: Option<Instant>,
    /// The output reached its end (every holder of the terminal closed it).
    eof: bool,
}

impl CommandState {
    /// The state of a new session: `signed` when only marks carrying its nonce count,
    /// `prompt_marks_only` for shells that print no `C`.
    pub(super) fn new(scanner: Scanner, signed: bool, prompt_marks_only: bool) -> Self {
        CommandState {
            scanner,
            signed,
            phase: CommandPhase::new(prompt_marks_only),
            marks: VecDeque::new(),
            marks_seen: 0,
            phase_before: VecDeque::new(),
            reported_cwd: None,
            exit: None,
            exited_at: None,
            eof: false,
        }
    }

    /// Records the marks in `chunk` (at position `at`) and returns where the command phase
    /// changes in it: (position just after a mark, inside a command from there on, command
    /// boundaries seen by then).
    pub(super) fn on_output(&mut self, chunk: &[u8], at: u64) -> Vec<(u64, bool, u64)> {
        let mut found = Vec::new();
        self.scanner.feed(chunk, at, &mut found);
        found
            .into_iter()
            .filter_map(|mark| self.on_mark(mark))
            .collect()
    }

    fn on_mark(&mut self, mark: Mark) -> Option<(u64, bool, u64)> {
        if self.signed {
            let trusted = match &mark.kind {
                // The hook prints OSC 7 right after its `D` (or before any mark).
                MarkKind::Cwd(_) => self
                    .marks
                    .back()
                    .is_none_or(|m| matches!(m.kind, MarkKind::CommandEnd(_))),
                _ => mark.signed,
            };
            if !trusted {
                return None;
            }
        }
        let before = self.phase;
        let cut = match &mark.kind {
            MarkKind::Cwd(dir) => {
                self.reported_cwd = Some(dir.clone());
                None
            }
            kind => {
                self.phase.on_mark(kind, mark.start);
                Some((
                    mark.end,
                    self.phase.inside_command(),
                    self.phase.boundaries(),
                ))
            }
        };
        self.marks.push_back(mark);
        self.phase_before.push_back(before);
        self.marks_seen += 1;
        if self.marks.len() > MAX_MARKS {
            self.marks.pop_front();
            self.phase_before.pop_front();
        }
        cut
    }

    /// The main process ended (recorded by the waiter thread right after reaping it).
    pub(super) fn on_exit(&mut self, exit: Exit, at: Instant) {
        self.exit = Some(exit);
        self.exited_at = Some(at);
    }

    /// The output reached its end.
    pub(super) fn on_eof(&mut self) {
        self.eof = true;
    }

    /// The command phase now.
    pub(super) fn phase(&self) -> &CommandPhase {
        &self.phase
    }

    /// When the main process's exit was recorded, if it was.
    pub(super) fn exited_at(&self) -> Option<Instant> {
        self.exited_at
    }

    /// How the main process ended, once recorded.
    pub(super) fn exit(&self) -> Option<&Exit> {
        self.exit.as_ref()
    }

    /// The output reached its end.
    pub(super) fn output_ended(&self) -> bool {
        self.eof
    }

    /// The main process exited or the output reached its end: nothing will read input.
    pub(super) fn ending(&self) -> bool {
        self.exit.is_some() || self.eof
    }

    /// True once the shell has printed a mark: its commands can be followed exactly.
    pub(super) fn integrated(&self) -> bool {
        self.marks_seen > 0
    }

    /// The working directory the shell last reported.
    pub(super) fn reported_cwd(&self) -> Option<&str> {
        self.reported_cwd.as_deref()
    }

    /// Marks numbered from `seq` on (numbers count every mark ever seen).
    pub(super) fn marks_since(&self, seq: u64) -> impl Iterator<Item = &Mark> {
        let first = self.marks_seen - self.marks.len() as u64;
        self.marks.iter().skip(seq.saturating_sub(first) as usize)
    }

    /// Where a reader starting now begins.
    pub(super) fn baseline(&self) -> Baseline {
        Baseline {
            seq: self.marks_seen,
            phase: self.phase,
        }
    }

    /// Where a reader of the output from position `since` on began: the phase before the
    /// first kept mark at or after `since` (a command that ended after `since` has ended for
    /// it), else the phase now.
    pub(super) fn baseline_at(&self, since: u64) -> Baseline {
        let after = self
            .marks
            .iter()
            .rev()
            .take_while(|m| m.start >= since)
            .count();
        let index = self.marks.len() - after;
        Baseline {
            seq: self.marks_seen - after as u64,
            phase: self.phase_before.get(index).copied().unwrap_or(self.phase),
        }
    }

    /// The first mark of `kind`'s sort after `base` (an output start, a command end).
    pub(super) fn first_since(
        &self,
        base: &Baseline,
        wanted: fn(&MarkKind) -> bool,
    ) -> Option<&Mark> {
        self.marks_since(base.seq).find(|m| wanted(&m.kind))
    }

    /// Has the session's main process exited? Yes once its exit is recorded and its output
    /// reached its end, or [`DRAIN_GRACE`] after the exit (a background child may hold the
    /// terminal open). The end of output alone is not an exit: the program may have closed
    /// the terminal and run on, or been reaped a moment before its exit is recorded.
    pub(super) fn program_end(&self, now: Instant) -> Verdict<Exit> {
        match (&self.exit, self.exited_at) {
            (Some(exit), _) if self.eof => Verdict::Yes(exit.clone()),
            (Some(exit), Some(at)) if now >= at + DRAIN_GRACE => Verdict::Yes(exit.clone()),
            (Some(_), Some(at)) => Verdict::LookAt(at + DRAIN_GRACE),
            _ => Verdict::No,
        }
    }

    /// Is the program leaving? Its exit is recorded (its output may still drain), or its
    /// output ended and the main process no longer runs (`main_alive`, asked only then:
    /// reaped a moment before its exit is recorded, or a zombie about to be). Input it was
    /// given is answered by its exit, not by a quiet screen.
    pub(super) fn program_leaving(&self, main_alive: impl FnOnce() -> bool) -> bool {
        self.exit.is_some() || (self.eof && !main_alive())
    }

    /// Has the command `follow` follows ended (the table in [`Following`])? A session
    /// whose main process exited has nothing left running.
    pub(super) fn command_end(&self, follow: &mut Follow, seen: &Seen) -> Verdict<End> {
        let program = self.program_end(seen.now).map(|exit| End {
            to: None,
            status: exit.code,
            exit: Some(exit),
        });
        let by_command = match follow.what {
            Following::Program => Verdict::No,
            Following::Typed { marks: true } => self.typed_end_by_marks(&follow.base, seen),
            Following::Typed { marks: false } => {
                // Without marks the status is unknown; the echo is the caller's to know.
                follow.owned_since = match seen.shell_owns {
                    true => follow.owned_since.or(Some(seen.now)),
                    false => None,
                };
                let settled_at = (seen.last_output.max(follow.started) + SETTLE)
                    .max(follow.owned_since.unwrap_or(seen.now) + SETTLE);
                match seen.shell_owns {
                    true if seen.now >= settled_at => Verdict::Yes(End {
                        to: None,
                        status: None,
                        exit: None,
                    }),
                    true => Verdict::LookAt(settled_at),
                    false => Verdict::LookAt(seen.now + FOREGROUND_RECHECK),
                }
            }
            Following::Current => {
                // A command between `C` and its end still runs while the shell itself reads
                // the terminal (`read -p`).
                let owns = seen.shell_owns && !self.phase.running();
                let prompted = self.phase.prompt_back_since(&follow.base.phase);
                let settled_at = seen.last_output.max(follow.started) + SETTLE;
                match owns {
                    true if prompted || seen.now >= settled_at => Verdict::Yes(End {
                        to: None,
                        status: self
                            .phase
                            .ended_since(&follow.base.phase)
                            .and_then(|e| e.status),
                        exit: None,
                    }),
                    true => Verdict::LookAt(settled_at),
                    false => Verdict::LookAt(seen.now + FOREGROUND_RECHECK),
                }
            }
        };
        match follow.what {
            // A shell that exited ends the command, with no status of the command's own.
            Following::Typed { .. } | Following::Current => {
                by_command.or(program.map(|e| End { status: None, ..e }))
            }
            Following::Program => program,
        }
    }

    /// A typed command's end by marks: its end with the next prompt ready, or an end with no
    /// prompt after it (a framework replaced the `PS1` that carries `B`) once the shell owns
    /// the terminal and output settled.
    fn typed_end_by_marks(&self, base: &Baseline, seen: &Seen) -> Verdict<End> {
        let Some(end) = self.phase.ended_since(&base.phase) else {
            return Verdict::No;
        };
        let done = Verdict::Yes(End {
            to: Some(end.at),
            status: end.status,
            exit: None,
        });
        let settled_at = seen.last_output + SETTLE;
        match (end.ready, seen.shell_owns) {
            (true, _) => done,
            (false, true) if seen.now >= settled_at => done,
            (false, true) => Verdict::LookAt(settled_at.max(seen.now + Duration::from_millis(1))),
            (false, false) => Verdict::LookAt(seen.now + FOREGROUND_RECHECK),
        }
    }

    /// Does what was typed after `base` still run (an interrupt's question)? A program holds
    /// the terminal, or with `marks` no end with its next prompt ready came since and the
    /// main process has not exited.
    pub(super) fn still_running(&self, base: &Baseline, marks: bool, seen: &Seen) -> bool {
        let ended_ready = self
            .phase
            .ended_since(&base.phase)
            .is_some_and(|end| end.ready);
        let exited = matches!(self.program_end(seen.now), Verdict::Yes(_));
        !seen.shell_owns || (marks && !ended_ready && !exited)
    }

    /// The exit status of what ended since the input written at `before`: a command
    /// session's program (no input reaches one that exited, so its exit came after), or a
    /// command that ran in the shell then or was started by the input.
    pub(super) fn exit_since_input(
        &self,
        before: &CommandPhase,
        command_session: bool,
    ) -> Option<i32> {
        if command_session {
            return self.exit.as_ref().and_then(|e| e.code);
        }
        self.phase
            .ended_since(before)
            .filter(|end| end.ran)
            .and_then(|end| end.status)
    }

    /// A command the shell started after `base` has not ended (see
    /// [`CommandPhase::command_open_since`]): a read by the shell itself is then the
    /// command's (`read -p`), not the shell back at its prompt.
    pub(super) fn command_open_since(&self, base: &Baseline) -> bool {
        self.phase.command_open_since(&base.phase)
    }

    /// The shell's line editor read a command line (`B`) since `before`.
    pub(super) fn prompt_ready_since(&self, before: &CommandPhase) -> bool {
        self.phase.ready_since(before)
    }

    /// Busy for `terminal_list`: not exited, and a command session, a program in the
    /// terminal's foreground, or a command running by marks.
    pub(super) fn busy(&self, command_session: bool, program_in_foreground: bool) -> bool {
        self.exit.is_none() && (command_session || program_in_foreground || self.phase.running())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use MarkKind::{CommandEnd as D, CommandStart as B, OutputStart as C, PromptStart as A};

    const MS: Duration = Duration::from_millis(1);

    fn state(marks: &[MarkKind]) -> CommandState {
        let mut s = CommandState::new(Scanner::default(), false, false);
        for (i, kind) in marks.iter().enumerate() {
            s.on_mark(Mark {
                kind: kind.clone(),
                start: i as u64 * 10,
                end: i as u64 * 10 + 5,
                signed: true,
            });
        }
        s
    }

    fn exit(code: i32) -> Exit {
        Exit {
            code: Some(code),
            signal: None,
        }
    }

    /// What a look at time `t0 + at` saw: whether the shell owns the terminal and how long
    /// ago output last came.
    struct Look {
        at: u64,
        shell_owns: bool,
        quiet_for: u64,
    }

    fn look(t0: Instant, l: &Look) -> Seen {
        let now = t0 + MS * l.at as u32;
        Seen {
            now,
            shell_owns: l.shell_owns,
            last_output: now - MS * l.quiet_for as u32,
        }
    }

    /// What ended: (to, status, exited), or not yet with the look due (ms after `t0`, or
    /// `None` for the next event).
    type Want = Result<(Option<u64>, Option<i32>, bool), Option<u64>>;

    fn answer(t0: Instant, v: Verdict<End>) -> Want {
        match v {
            Verdict::Yes(e) => Ok((e.to, e.status, e.exit.is_some())),
            Verdict::LookAt(at) => Err(Some(at.duration_since(t0).as_millis() as u64)),
            Verdict::No => Err(None),
        }
    }

    /// One row: the wait, the marks before it began and after, the main process's end
    /// (exit status, ms after `t0` it was recorded, output ended), the looks in order, and
    /// the answer of the last look.
    struct Row {
        what: &'static str,
        follow: fn(Baseline, Instant) -> Follow,
        before: Vec<MarkKind>,
        after: Vec<MarkKind>,
        exit: Option<(i32, u64, bool)>,
        looks: Vec<Look>,
        want: Want,
    }

    fn exec_marks(base: Baseline, t0: Instant) -> Follow {
        Follow::typed(base, true, t0)
    }
    fn exec_plain(base: Baseline, t0: Instant) -> Follow {
        Follow::typed(base, false, t0)
    }
    fn wait_shell(base: Baseline, t0: Instant) -> Follow {
        Follow::current(base, false, t0)
    }
    fn wait_program(base: Baseline, t0: Instant) -> Follow {
        Follow::current(base, true, t0)
    }

    fn owns(at: u64, quiet_for: u64) -> Look {
        Look {
            at,
            shell_owns: true,
            quiet_for,
        }
    }
    fn busy(at: u64) -> Look {
        Look {
            at,
            shell_owns: false,
            quiet_for: 0,
        }
    }

    #[test]
    fn the_end_rule() {
        let rows = vec![
            Row {
                what: "exec: D and the next prompt: ended at D with its status",
                follow: exec_marks,
                before: vec![A, B],
                after: vec![C, D(Some(2)), A, B],
                exit: None,
                looks: vec![busy(0)],
                want: Ok((Some(30), Some(2), false)),
            },
            Row {
                what: "exec: still running",
                follow: exec_marks,
                before: vec![A, B],
                after: vec![C],
                exit: None,
                looks: vec![busy(0)],
                want: Err(None),
            },
            Row {
                what: "exec: D without B waits for the shell to own the terminal",
                follow: exec_marks,
                before: vec![A, B],
                after: vec![C, D(Some(0)), A],
                exit: None,
                looks: vec![busy(5)],
                want: Err(Some(5 + 250)),
            },
            Row {
                what: "exec: D without B, the shell owns, output not settled",
                follow: exec_marks,
                before: vec![A, B],
                after: vec![C, D(Some(0)), A],
                exit: None,
                looks: vec![owns(5, 10)],
                want: Err(Some(5 + 40)),
            },
            Row {
                what: "exec: D without B, the shell owns, output settled",
                follow: exec_marks,
                before: vec![A, B],
                after: vec![C, D(Some(4)), A],
                exit: None,
                looks: vec![owns(60, 50)],
                want: Ok((Some(30), Some(4), false)),
            },
            Row {
                what: "exec: the shell exited mid-command: ended, no status of the command",
                follow: exec_marks,
                before: vec![A, B],
                after: vec![C],
                exit: Some((3, 0, true)),
                looks: vec![busy(1)],
                want: Ok((None, None, true)),
            },
            Row {
                what: "exec: output ended but no exit recorded yet: not ended",
                follow: exec_marks,
                before: vec![A, B],
                after: vec![C],
                exit: None,
                looks: vec![busy(1)],
                want: Err(None),
            },
            Row {
                what: "exec, no marks: a program holds the terminal",
                follow: exec_plain,
                before: vec![],
                after: vec![],
                exit: None,
                looks: vec![busy(100)],
                want: Err(Some(100 + 250)),
            },
            Row {
                what: "exec, no marks: the shell owns at one look only",
                follow: exec_plain,
                before: vec![],
                after: vec![],
                exit: None,
                looks: vec![owns(100, 100)],
                want: Err(Some(100 + 50)),
            },
            Row {
                what: "exec, no marks: a program between two looks restarts the count",
                follow: exec_plain,
                before: vec![],
                after: vec![],
                exit: None,
                looks: vec![owns(100, 100), busy(120), owns(160, 100)],
                want: Err(Some(160 + 50)),
            },
            Row {
                what: "exec, no marks: the shell owns at two looks SETTLE apart, output still",
                follow: exec_plain,
                before: vec![],
                after: vec![],
                exit: None,
                looks: vec![owns(100, 100), owns(150, 150)],
                want: Ok((None, None, false)),
            },
            Row {
                what: "wait in a shell: the next prompt came: ended at once",
                follow: wait_shell,
                before: vec![A, B, C],
                after: vec![D(Some(1)), A, B],
                exit: None,
                looks: vec![owns(1, 0)],
                want: Ok((None, Some(1), false)),
            },
            Row {
                what: "wait in a shell: running by marks although the shell reads (read -p)",
                follow: wait_shell,
                before: vec![A, B, C],
                after: vec![],
                exit: None,
                looks: vec![owns(100, 100)],
                want: Err(Some(100 + 250)),
            },
            Row {
                what: "wait in a shell: nothing runs, output settled",
                follow: wait_shell,
                before: vec![A, B],
                after: vec![],
                exit: None,
                looks: vec![owns(60, 60)],
                want: Ok((None, None, false)),
            },
            Row {
                what: "wait in a shell: nothing runs, output not settled yet",
                follow: wait_shell,
                before: vec![A, B],
                after: vec![],
                exit: None,
                looks: vec![owns(20, 20)],
                want: Err(Some(50)),
            },
            Row {
                what: "wait in a shell: a program holds the terminal",
                follow: wait_shell,
                before: vec![A, B],
                after: vec![],
                exit: None,
                looks: vec![busy(20)],
                want: Err(Some(20 + 250)),
            },
            Row {
                what: "command session: exited with its output ended: its status",
                follow: wait_program,
                before: vec![],
                after: vec![],
                exit: Some((3, 0, true)),
                looks: vec![owns(1, 1)],
                want: Ok((None, Some(3), true)),
            },
            Row {
                what: "command session: output ended, exit not recorded: not yet (the bug)",
                follow: wait_program,
                before: vec![],
                after: vec![],
                exit: None,
                looks: vec![owns(500, 500)],
                want: Err(None),
            },
            Row {
                what: "command session: exited, output still open: drained after the grace",
                follow: wait_program,
                before: vec![],
                after: vec![],
                exit: Some((0, 10, false)),
                looks: vec![owns(20, 0)],
                want: Err(Some(10 + 100)),
            },
            Row {
                what: "command session: exited, output still open past the grace",
                follow: wait_program,
                before: vec![],
                after: vec![],
                exit: Some((7, 10, false)),
                looks: vec![owns(110, 0)],
                want: Ok((None, Some(7), true)),
            },
            Row {
                what: "command session: the shell owning the terminal says nothing",
                follow: wait_program,
                before: vec![],
                after: vec![],
                exit: None,
                looks: vec![owns(1000, 1000)],
                want: Err(None),
            },
        ];
        let t0 = Instant::now();
        for row in rows {
            let mut s = state(&row.before);
            let mut follow = (row.follow)(s.baseline(), t0);
            for kind in &row.after {
                s.on_mark(Mark {
                    kind: kind.clone(),
                    start: s.marks_seen * 10,
                    end: s.marks_seen * 10 + 5,
                    signed: true,
                });
            }
            if let Some((code, at, eof)) = row.exit {
                s.on_exit(exit(code), t0 + MS * at as u32);
                if eof {
                    s.on_eof();
                }
            } else if row.what.contains("output ended") {
                s.on_eof();
            }
            let mut last = Verdict::No;
            for l in &row.looks {
                last = s.command_end(&mut follow, &look(t0, l));
            }
            assert_eq!(answer(t0, last), row.want, "{}", row.what);
        }
    }

    #[test]
    fn an_interrupt_stops_once_nothing_runs() {
        let t0 = Instant::now();
        let mut s = state(&[A, B]);
        let base = s.baseline();
        let seen = look(t0, &owns(0, 0));
        assert!(
            !s.still_running(&base, false, &seen),
            "no marks, the shell owns"
        );
        assert!(
            s.still_running(&base, false, &look(t0, &busy(0))),
            "a program"
        );
        assert!(s.still_running(&base, true, &seen), "marks: no end yet");
        for kind in [C, D(Some(130)), A] {
            s.on_mark(Mark {
                kind,
                start: 0,
                end: 0,
                signed: true,
            });
        }
        assert!(
            s.still_running(&base, true, &seen),
            "ended, prompt not ready"
        );
        s.on_mark(Mark {
            kind: B,
            start: 0,
            end: 0,
            signed: true,
        });
        assert!(!s.still_running(&base, true, &seen), "the prompt is back");
        let mut gone = state(&[A, B, C]);
        gone.on_exit(exit(0), t0);
        gone.on_eof();
        assert!(!gone.still_running(&base, true, &seen), "the shell exited");
    }

    #[test]
    fn what_ended_since_the_input() {
        let mut s = state(&[A, B]);
        let before = *s.phase();
        s.on_mark(Mark {
            kind: C,
            start: 0,
            end: 0,
            signed: true,
        });
        assert_eq!(s.exit_since_input(&before, false), None);
        s.on_mark(Mark {
            kind: D(Some(5)),
            start: 0,
            end: 0,
            signed: true,
        });
        assert_eq!(s.exit_since_input(&before, false), Some(5));
        // A D at an empty prompt ended nothing that ran.
        let mut empty = state(&[A, B]);
        let before = *empty.phase();
        empty.on_mark(Mark {
            kind: D(Some(0)),
            start: 0,
            end: 0,
            signed: true,
        });
        assert_eq!(empty.exit_since_input(&before, false), None);
        // A command session: its program's status, once recorded.
        let mut program = state(&[]);
        let before = *program.phase();
        assert_eq!(program.exit_since_input(&before, true), None);
        program.on_exit(exit(0), Instant::now());
        assert_eq!(program.exit_since_input(&before, true), Some(0));
    }

    #[test]
    fn a_program_has_exited_once_recorded_and_drained() {
        let t0 = Instant::now();
        let mut s = state(&[]);
        s.on_eof();
        assert_eq!(s.program_end(t0), Verdict::No, "output ended, no exit");
        let mut s = state(&[]);
        s.on_exit(exit(1), t0);
        assert_eq!(s.program_end(t0), Verdict::LookAt(t0 + DRAIN_GRACE));
        assert_eq!(s.program_end(t0 + DRAIN_GRACE), Verdict::Yes(exit(1)));
        s.on_eof();
        assert_eq!(s.program_end(t0), Verdict::Yes(exit(1)));
        assert!(!s.busy(true, true));
    }

    #[test]
    fn a_program_is_leaving_once_it_exited_or_closed_the_terminal_and_is_gone() {
        let mut s = state(&[]);
        assert!(!s.program_leaving(|| false), "output open, no exit");
        s.on_eof();
        assert!(s.program_leaving(|| false), "output ended, process gone");
        assert!(!s.program_leaving(|| true), "output ended, still runs");
        let mut s = state(&[]);
        s.on_exit(exit(0), Instant::now());
        assert!(s.program_leaving(|| true), "exit recorded");
    }
}
