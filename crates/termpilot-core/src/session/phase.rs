//! The command phase: the one place that decides, from a shell's OSC 133 marks, whether it
//! is drawing a prompt, waiting at its line editor, running a command, or has just ended one.
//!
//! The command state (`command_state.rs`, which owns the phase with the marks and the main
//! process's end) feeds every trusted mark to [`CommandPhase::on_mark`] as it is scanned and
//! answers from it what exec, the waits, interrupts, answers, presses and batches ask; a new
//! session's readiness and the rule for query replies read the phase too. None of them
//! interprets marks itself.
//!
//! | phase now | mark | phase next | also |
//! |---|---|---|---|
//! | any | `A` (prompt starts) | `Prompt` | from `Running`: the command ended, status unknown |
//! | any | `B` (prompt drawn, line editor reads) | `Ready` | from `Running`: the command ended, status unknown; after an end: the next prompt is ready |
//! | any | `C` (output starts) | `Running` | |
//! | any | `D;n` (command ended) | `Ended` | the command ended with status `n` (also with no `C` before it) |
//! | any | OSC 7 (working directory) | unchanged | |
//!
//! A prompt mark after `C` ends the command, because a hook that failed to print `D` (an rc
//! file's `set -u`, a replaced `PROMPT_COMMAND`) must not leave it running forever. Shells
//! that print no `C` (dash, whose hooks live in `PS1`) are never `Running`: their commands
//! end by `D`, and "inside a command" for the reply rule is "after `B`" there.
//!
//! Readers compare two [`CommandPhase`] values — one taken when they began (a [`Baseline`])
//! and the one now — so "a command ended since I typed" and "the next prompt is ready" are
//! counts that moved, never a re-scan of marks that may have been dropped.

use super::integration::MarkKind;

/// Where a shell is, by its marks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Phase {
    /// No prompt mark yet.
    #[default]
    Starting,
    /// `A`: the prompt is being drawn.
    Prompt,
    /// `B`: the line editor is reading the command line.
    Ready,
    /// `C`: a command runs and its output flows.
    Running,
    /// `D`: a command ended; the next prompt is not drawn yet.
    Ended,
}

/// How the last command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CommandEnd {
    /// The output position where the command's output ends (the ending mark's start).
    pub at: u64,
    /// Its exit status, when a `D` carried one.
    pub status: Option<i32>,
    /// A `C` opened it (a `D` at an empty prompt ends nothing that ran).
    pub ran: bool,
    /// The next prompt's `B` followed: the shell reads its next command line.
    pub ready: bool,
}

/// The command phase and the counts readers compare; cheap to copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct CommandPhase {
    phase: Phase,
    /// The shell prints no `C` (dash).
    prompt_marks_only: bool,
    /// `A` marks seen.
    prompts: u64,
    /// `B` marks seen.
    readies: u64,
    /// `C` marks seen.
    outputs: u64,
    /// Commands ended (by `D`, or by a prompt mark while running).
    ends: u64,
    /// Boundaries between one command and the next (`D`, `A`, `B`): a command's held query
    /// answer is dropped once one passes (see `replies.rs`).
    boundaries: u64,
    last_end: Option<CommandEnd>,
}

impl CommandPhase {
    /// The phase of a new session; `prompt_marks_only` for shells that print no `C`.
    pub(super) fn new(prompt_marks_only: bool) -> Self {
        CommandPhase {
            prompt_marks_only,
            ..Default::default()
        }
    }

    /// Moves the phase by one mark that starts at output position `at` (the table above).
    pub(super) fn on_mark(&mut self, kind: &MarkKind, at: u64) {
        let was_running = self.phase == Phase::Running;
        let end = |status, me: &mut Self| {
            me.ends += 1;
            me.last_end = Some(CommandEnd {
                at,
                status,
                ran: was_running,
                ready: false,
            });
        };
        match kind {
            MarkKind::PromptStart => {
                if was_running {
                    end(None, self);
                }
                self.prompts += 1;
                self.boundaries += 1;
                self.phase = Phase::Prompt;
            }
            MarkKind::CommandStart => {
                if was_running {
                    end(None, self);
                }
                if let Some(last) = &mut self.last_end {
                    last.ready = true;
                }
                self.readies += 1;
                self.boundaries += 1;
                self.phase = Phase::Ready;
            }
            MarkKind::OutputStart => {
                self.outputs += 1;
                self.phase = Phase::Running;
            }
            MarkKind::CommandEnd(status) => {
                end(*status, self);
                self.boundaries += 1;
                self.phase = Phase::Ended;
            }
            MarkKind::Cwd(_) => {}
        }
    }

    #[cfg(test)]
    pub(super) fn phase(&self) -> Phase {
        self.phase
    }

    /// A command runs (between its `C` and its end).
    pub(super) fn running(&self) -> bool {
        self.phase == Phase::Running
    }

    /// Inside a command for the reply rule: running, or (a shell without `C`) after `B`.
    pub(super) fn inside_command(&self) -> bool {
        self.running() || (self.prompt_marks_only && self.phase == Phase::Ready)
    }

    /// The shell has drawn a prompt (`A` or `B`): typed input reaches its line editor.
    pub(super) fn prompt_seen(&self) -> bool {
        self.prompts + self.readies > 0
    }

    /// The shell's line editor has read a command line at least once (`B`).
    pub(super) fn ever_ready(&self) -> bool {
        self.readies > 0
    }

    /// Command boundaries ever seen (`D`, `A`, `B`).
    pub(super) fn boundaries(&self) -> u64 {
        self.boundaries
    }

    /// How the last command that ended after `before` ended, if one did.
    pub(super) fn ended_since(&self, before: &CommandPhase) -> Option<CommandEnd> {
        (self.ends > before.ends).then_some(self.last_end).flatten()
    }

    /// A command ended after `before` and the next prompt is ready.
    pub(super) fn prompt_back_since(&self, before: &CommandPhase) -> bool {
        self.ended_since(before).is_some_and(|end| end.ready)
    }

    /// The line editor read a command line (`B`) after `before`.
    pub(super) fn ready_since(&self, before: &CommandPhase) -> bool {
        self.readies > before.readies
    }

    /// True while a command the shell started after `before` has not ended. A shell seen to
    /// mark output starts answers exactly ([`CommandPhase::running`]); one that never did
    /// (dash, or hooks whose `C` a prompt framework broke) gives no sign of a start, so until
    /// the next boundary a read by the shell itself is the command's.
    pub(super) fn command_open_since(&self, before: &CommandPhase) -> bool {
        if self.outputs > 0 {
            return self.running();
        }
        self.boundaries == before.boundaries
    }
}

/// Where a reader began: the phase then and how many marks had been seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Baseline {
    /// Marks seen before (the first mark after it is number `seq`).
    pub seq: u64,
    pub phase: CommandPhase,
}

#[cfg(test)]
mod tests {
    use super::*;

    use MarkKind::{CommandEnd as D, CommandStart as B, OutputStart as C, PromptStart as A};

    fn d(code: i32) -> MarkKind {
        D(Some(code))
    }

    /// Feeds marks (each at its index × 10) after `before`, from a baseline taken after
    /// `setup`.
    fn run(
        prompt_only: bool,
        setup: &[MarkKind],
        marks: &[MarkKind],
    ) -> (CommandPhase, CommandPhase) {
        let mut p = CommandPhase::new(prompt_only);
        for (i, m) in setup.iter().enumerate() {
            p.on_mark(m, i as u64 * 10);
        }
        let base = p;
        for (i, m) in marks.iter().enumerate() {
            p.on_mark(m, 1000 + i as u64 * 10);
        }
        (base, p)
    }

    /// One row: the shell, marks before the baseline, marks after, then the phase, whether a
    /// command runs, the end since the baseline (status, ran, ready) and the open command.
    struct Row {
        what: &'static str,
        prompt_only: bool,
        setup: Vec<MarkKind>,
        marks: Vec<MarkKind>,
        phase: Phase,
        end: Option<(Option<i32>, bool, bool)>,
        open: bool,
    }

    #[test]
    fn the_table() {
        let rows = vec![
            Row {
                what: "bash: a command runs and ends, the next prompt drawn",
                prompt_only: false,
                setup: vec![A, B],
                marks: vec![C, d(0), A, B],
                phase: Phase::Ready,
                end: Some((Some(0), true, true)),
                open: false,
            },
            Row {
                what: "still running",
                prompt_only: false,
                setup: vec![A, B],
                marks: vec![C],
                phase: Phase::Running,
                end: None,
                open: true,
            },
            Row {
                what: "ended, the prompt framework dropped B",
                prompt_only: false,
                setup: vec![A, B],
                marks: vec![C, d(3), A],
                phase: Phase::Prompt,
                end: Some((Some(3), true, false)),
                open: false,
            },
            Row {
                what: "the hook failed to print D: A after C ends it",
                prompt_only: false,
                setup: vec![A, B],
                marks: vec![C, A, B],
                phase: Phase::Ready,
                end: Some((None, true, true)),
                open: false,
            },
            Row {
                what: "no A at all: B after C ends it and is the next prompt",
                prompt_only: false,
                setup: vec![B],
                marks: vec![C, B],
                phase: Phase::Ready,
                end: Some((None, true, true)),
                open: false,
            },
            Row {
                what: "D at an empty prompt ends nothing that ran",
                prompt_only: false,
                setup: vec![A, B],
                marks: vec![d(0), A, B],
                phase: Phase::Ready,
                end: Some((Some(0), false, true)),
                open: false,
            },
            Row {
                what: "a redrawn prompt (transient prompt, resize) is no command",
                prompt_only: false,
                setup: vec![A, B],
                marks: vec![A, B, A, B],
                phase: Phase::Ready,
                end: None,
                open: false,
            },
            Row {
                what: "two commands: the last end counts",
                prompt_only: false,
                setup: vec![A, B],
                marks: vec![C, d(1), A, B, C, d(2)],
                phase: Phase::Ended,
                end: Some((Some(2), true, false)),
                open: false,
            },
            Row {
                what: "OSC 7 between D and A changes nothing",
                prompt_only: false,
                setup: vec![A, B],
                marks: vec![C, d(0), MarkKind::Cwd("/tmp".into()), A, B],
                phase: Phase::Ready,
                end: Some((Some(0), true, true)),
                open: false,
            },
            Row {
                what: "a second C while running is the same command",
                prompt_only: false,
                setup: vec![A, B],
                marks: vec![C, C, d(0)],
                phase: Phase::Ended,
                end: Some((Some(0), true, false)),
                open: false,
            },
            Row {
                what: "dash: typed, nothing back yet, the command is open",
                prompt_only: true,
                setup: vec![d(0), A, B],
                marks: vec![],
                phase: Phase::Ready,
                end: None,
                open: true,
            },
            Row {
                what: "dash: the command ends by D, the next prompt by B",
                prompt_only: true,
                setup: vec![d(0), A, B],
                marks: vec![d(1), A, B],
                phase: Phase::Ready,
                end: Some((Some(1), false, true)),
                open: false,
            },
            Row {
                what: "dash: the first prompt before any command",
                prompt_only: true,
                setup: vec![],
                marks: vec![A, B],
                phase: Phase::Ready,
                end: None,
                open: false,
            },
        ];
        for row in rows {
            let (base, now) = run(row.prompt_only, &row.setup, &row.marks);
            assert_eq!(now.phase(), row.phase, "{}: phase", row.what);
            assert_eq!(now.running(), row.phase == Phase::Running, "{}", row.what);
            let end = now.ended_since(&base).map(|e| (e.status, e.ran, e.ready));
            assert_eq!(end, row.end, "{}: end", row.what);
            assert_eq!(
                now.prompt_back_since(&base),
                row.end.is_some_and(|e| e.2),
                "{}",
                row.what
            );
            assert_eq!(
                now.command_open_since(&base),
                row.open,
                "{}: open",
                row.what
            );
        }
    }

    #[test]
    fn an_end_is_where_its_mark_starts() {
        let (base, now) = run(false, &[A, B], &[C, d(0), A, B]);
        // C at 1000, D at 1010.
        assert_eq!(now.ended_since(&base).unwrap().at, 1010);
        let (base, now) = run(false, &[A, B], &[C, A]);
        assert_eq!(now.ended_since(&base).unwrap().at, 1010);
    }

    #[test]
    fn the_reply_rule_sees_inside_and_boundaries() {
        let mut p = CommandPhase::new(false);
        assert!(!p.inside_command());
        for m in [A, B, C] {
            p.on_mark(&m, 0);
        }
        assert!(p.inside_command());
        assert_eq!(p.boundaries(), 2);
        p.on_mark(&d(0), 0);
        assert!(!p.inside_command());
        assert_eq!(p.boundaries(), 3);
        // dash: after B is inside.
        let mut dash = CommandPhase::new(true);
        dash.on_mark(&A, 0);
        assert!(!dash.inside_command());
        dash.on_mark(&B, 0);
        assert!(dash.inside_command());
    }

    #[test]
    fn readiness_counts() {
        let mut p = CommandPhase::new(false);
        assert!(!p.prompt_seen() && !p.ever_ready());
        p.on_mark(&A, 0);
        assert!(p.prompt_seen() && !p.ever_ready());
        let before = p;
        p.on_mark(&B, 10);
        assert!(p.ever_ready() && p.ready_since(&before));
        assert!(!p.ready_since(&p));
    }
}
