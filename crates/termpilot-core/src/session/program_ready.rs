//! A command session's start (`terminal_start` with `command`): it answers as `terminal_exec`
//! of the same program does, in one call — once the program waits for input (the same rule,
//! [`SessionCall::input_wait_counts`], on the same schedule, [`InputLooks`]), with the prompt line
//! it waits on and, for a full-screen program, its screen as text in place of the output.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::call::SessionCall;
use super::ops::READY_MAX;
use super::prompt_exec_input::InputLooks;
use super::screen::ScreenText;
use super::waiter::{Look, Waited, Waiter};

/// How a started program stands once its start has been waited for.
#[derive(Debug, Clone, Default)]
pub struct ProgramReady {
    /// The line the program waits on, when it waits for input.
    pub waiting_for_input: Option<String>,
    /// Its screen, while it holds the alternate screen (vim, less, htop).
    pub screen: Option<ScreenText>,
}

impl SessionCall {
    /// Waits (at most [`READY_MAX`]) until the command session's program waits for input, or
    /// it exited, or — having printed — its output has been still so long that any wait would
    /// count ([`super::prompt_exec_input::INPUT_QUIET`]) and it is not waiting (it works on
    /// its own: `tail -f`). A program that printed nothing is waited for until it reads the
    /// terminal or prints.
    pub(crate) async fn wait_program_ready(&self, cancel: &CancellationToken) -> ProgramReady {
        let tty = self.stdin_tty();
        let started = Instant::now();
        let mut looks = InputLooks::new(started);
        let waited = Waiter::new(self)
            .until(started + READY_MAX)
            .cancel(cancel)
            .run(|now| {
                let (printed, last_output, gone) = {
                    let s = self.state();
                    (
                        s.output.end() > 0,
                        s.output.last_output(),
                        s.command.ending(),
                    )
                };
                if gone {
                    return Look::Done(None);
                }
                let quiet_since = last_output.max(started);
                let due = looks.due(quiet_since);
                if now < due {
                    return Look::Until(due);
                }
                // The program is the session's own process (or a group it put in front).
                let group = self.foreground_group().unwrap_or(self.pid);
                if let Some(tty) = &tty
                    && self.input_wait_counts(now, quiet_since, group, true, tty, || true)
                {
                    return Look::Done(Some(self.cursor_line()));
                }
                if printed && InputLooks::any_wait_counts(now, quiet_since) {
                    return Look::Done(None);
                }
                looks.looked(now);
                Look::Until(looks.due(quiet_since))
            })
            .await;
        let waiting_for_input = match waited {
            Waited::Done(waiting) => waiting,
            Waited::Deadline | Waited::Cancelled => None,
        };
        let running = self.exit().is_none() && !self.ending();
        ProgramReady {
            waiting_for_input,
            screen: running.then(|| self.full_screen()).flatten(),
        }
    }
}
