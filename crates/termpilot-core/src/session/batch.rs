//! Batches: several inputs sent in one call (seed 001's `terminal_batch`).
//!
//! A batch is checked whole before anything is sent (key names, cells on the screen, at most
//! [`MAX_ACTIONS`]), then run in order. Between two inputs the batch waits only until the
//! program took the first (the answer rule of `answer.rs`, at most [`STEP_MAX`]; not for a
//! remote session, where it cannot be known), so a program that ended on an input (`cat`
//! and Ctrl+D) is noticed there and nothing is typed into the ended session; a `wait` action
//! is how an agent lets a program react further. The first failure stops the batch, and the
//! outcome says how many actions were done and which one failed and why, since the earlier
//! ones took effect. A secret prompt met during a `wait` goes to a person (when the call
//! carries an [`Asker`]), as in `terminal_wait`: an answer lets the wait go on, anything else
//! fails it.

use std::time::Duration;

use regex::Regex;
use tokio_util::sync::CancellationToken;

use super::call::SessionCall;
use super::keys;
use super::mouse::Direction;
use super::secret::{Asker, PersonOutcome};
use super::terminal::describe_exit;
use super::wait::{On, Reason, Until};
use crate::error::{Error, Fault, Result};
use crate::progress::{NoProgress, Progress};

/// The most actions one batch may hold.
pub const MAX_ACTIONS: usize = 50;

/// Between two inputs, the longest wait for the program to take the first.
pub(super) const STEP_MAX: Duration = super::answer::FALLBACK_QUIET;

/// One input of a batch. Cells are 1-based.
#[derive(Debug, Clone)]
pub enum Action {
    Type(String),
    Paste(String),
    Press {
        key: String,
        count: usize,
    },
    Click {
        row: usize,
        col: usize,
    },
    Scroll {
        row: usize,
        col: usize,
        direction: Direction,
        amount: usize,
    },
    /// A fixed pause the agent asked for.
    Sleep(Duration),
    /// Until the regex matches the screen, at most `timeout`; `pattern` is as the agent
    /// wrote it.
    WaitFor {
        pattern: String,
        re: Regex,
        timeout: Duration,
    },
}

impl Action {
    /// The action sends input to the program.
    fn types(&self) -> bool {
        !matches!(self, Action::Sleep(_) | Action::WaitFor { .. })
    }

    /// A short name for messages: `press Enter`, `click 3,7`.
    pub fn describe(&self) -> String {
        match self {
            Action::Type(t) => format!("type {:?}", short(t)),
            Action::Paste(t) => format!("paste {:?}", short(t)),
            Action::Press { key, count: 1 } => format!("press {key}"),
            Action::Press { key, count } => format!("press {key} ×{count}"),
            Action::Click { row, col } => format!("click row {row}, column {col}"),
            Action::Scroll { direction, .. } => {
                format!(
                    "scroll {}",
                    if *direction == Direction::Up {
                        "up"
                    } else {
                        "down"
                    }
                )
            }
            Action::Sleep(d) => format!("wait {} ms", d.as_millis()),
            Action::WaitFor { pattern, .. } => format!("wait for /{pattern}/"),
        }
    }
}

fn short(text: &str) -> String {
    match text.char_indices().nth(30) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// How a batch went.
#[derive(Debug, Clone)]
pub struct BatchOutcome {
    /// Actions done, counted from the start.
    pub completed: usize,
    /// The 1-based number of the action that failed, and why.
    pub failure: Option<(usize, String)>,
    /// What a person did about a secret prompt met during a `wait` (the last thing).
    pub person: Option<PersonOutcome>,
}

/// Who answers secret prompts met during a batch's waits, and how the wait reports.
pub struct BatchPerson<'a> {
    pub asker: Option<&'a Asker>,
    pub progress: &'a dyn Progress,
}

/// Checks a whole batch against a screen of `rows` × `cols` before anything is sent.
pub(super) fn validate(actions: &[Action], rows: usize, cols: usize) -> Result<()> {
    if actions.is_empty() || actions.len() > MAX_ACTIONS {
        return Err(Error::InvalidInput(format!(
            "A batch holds 1 to {MAX_ACTIONS} actions, not {}; split it into several calls.",
            actions.len()
        )));
    }
    for (i, action) in actions.iter().enumerate() {
        let problem = match action {
            Action::Press { key, .. } => keys::encode(key, false).err().map(|e| e.to_string()),
            Action::Click { row, col } | Action::Scroll { row, col, .. }
                if *row == 0 || *col == 0 || *row > rows || *col > cols =>
            {
                Some(format!(
                    "row {row}, column {col} is outside the screen (rows 1–{rows}, columns 1–{cols})"
                ))
            }
            _ => None,
        };
        if let Some(problem) = problem {
            return Err(Error::InvalidInput(format!(
                "Action {} ({}) is invalid: {}; nothing was sent.",
                i + 1,
                action.describe(),
                problem.trim_end_matches('.')
            )));
        }
    }
    Ok(())
}

impl SessionCall {
    /// Validates then runs `actions` in order, stopping at the first failure.
    pub async fn run_batch(
        &self,
        actions: &[Action],
        cancel: &CancellationToken,
        person: BatchPerson<'_>,
    ) -> Result<BatchOutcome> {
        let (rows, cols) = self.screen_size();
        validate(actions, rows, cols)?;
        let knowable = self.shape.remote.is_none();
        let mut said = None;
        for (i, action) in actions.iter().enumerate() {
            let done = match (person.asker, action.types()) {
                (Some(asker), false) => self.wait_asking(action, cancel, asker, &person).await,
                _ => (self.run_action(action, cancel).await, None),
            };
            said = done.1.or(said);
            if let Err(e) = done.0 {
                return Ok(BatchOutcome {
                    completed: i,
                    failure: Some((i + 1, e.to_string())),
                    person: said,
                });
            }
            if i + 1 == actions.len() || !action.types() {
                continue;
            }
            if knowable {
                self.wait_answer(STEP_MAX, cancel).await;
            }
            // The program ended on this input: the rest is not sent.
            if let Some(exit) = self.exit_settled().await {
                let why = Fault::ProgramExited {
                    id: self.id.clone(),
                    how: describe_exit(&exit),
                };
                return Ok(BatchOutcome {
                    completed: i + 1,
                    failure: Some((i + 2, why.to_string())),
                    person: said,
                });
            }
        }
        Ok(BatchOutcome {
            completed: actions.len(),
            failure: None,
            person: said,
        })
    }

    /// A `wait` action with a person answering secret prompts met meanwhile: the action's
    /// result (failed when a person did not answer), and what a person did.
    async fn wait_asking(
        &self,
        action: &Action,
        cancel: &CancellationToken,
        asker: &Asker,
        person: &BatchPerson<'_>,
    ) -> (Result<()>, Option<PersonOutcome>) {
        let answered = std::sync::atomic::AtomicUsize::new(0);
        tokio::select! {
            done = self.run_action(action, cancel) => {
                let answered = answered.load(std::sync::atomic::Ordering::Relaxed) > 0;
                (done, answered.then_some(PersonOutcome::Answered))
            }
            said = self.answer_secrets(asker, cancel, person.progress, &answered) => {
                let why = "the program waits at a secret prompt no person answered";
                (Err(Error::Other(why.into())), Some(said))
            }
        }
    }

    async fn run_action(&self, action: &Action, cancel: &CancellationToken) -> Result<()> {
        match action {
            Action::Type(text) => self.type_text(text, false).await.map(drop),
            Action::Paste(text) => self.type_text(text, true).await.map(drop),
            Action::Press { key, count } => self.press(key, *count).await.map(drop),
            Action::Click { row, col } => self.click(*row, *col).await.map(drop),
            Action::Scroll {
                row,
                col,
                direction,
                amount,
            } => self.scroll(*row, *col, *direction, *amount).await.map(drop),
            Action::Sleep(d) => {
                tokio::select! {
                    _ = tokio::time::sleep(*d) => Ok(()),
                    _ = cancel.cancelled() => Err(Error::Other("The call was cancelled.".into())),
                }
            }
            Action::WaitFor {
                pattern,
                re,
                timeout,
            } => {
                let since = self.position();
                let until = Until::Pattern(re.clone(), On::Screen);
                let outcome = self
                    .wait_until(&until, since, *timeout, cancel, &NoProgress)
                    .await;
                match outcome.reason {
                    Reason::Matched => Ok(()),
                    Reason::Timeout => Err(Error::Other(format!(
                        "/{pattern}/ did not appear on the screen within {} ms",
                        timeout.as_millis()
                    ))),
                    Reason::Cancelled => Err(Error::Other("The call was cancelled.".into())),
                    _ => Err(Error::Other(format!(
                        "the program ended before /{pattern}/ appeared on the screen"
                    ))),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_everything_before_sending() {
        let ok = vec![
            Action::Press {
                key: "Enter".into(),
                count: 1,
            },
            Action::Click { row: 24, col: 80 },
        ];
        validate(&ok, 24, 80).unwrap();
        let bad_key = vec![
            Action::Type("x".into()),
            Action::Press {
                key: "Banana".into(),
                count: 1,
            },
        ];
        let e = validate(&bad_key, 24, 80).unwrap_err().to_string();
        assert!(e.starts_with("Action 2 (press Banana) is invalid"), "{e}");
        let off = vec![Action::Click { row: 25, col: 1 }];
        let e = validate(&off, 24, 80).unwrap_err().to_string();
        assert!(
            e.contains("outside the screen") && e.contains("nothing was sent"),
            "{e}"
        );
        assert!(validate(&[], 24, 80).is_err());
        let many = vec![Action::Type("a".into()); MAX_ACTIONS + 1];
        assert!(
            validate(&many, 24, 80)
                .unwrap_err()
                .to_string()
                .contains("1 to 50")
        );
    }
}
