//! Secret prompts, answered by a person instead of the agent (issue 35).
//!
//! A program waits at a secret prompt when the terminal is in line mode with echo off
//! (`getpass`, `sudo`, `ssh`, `read -s`) and a process of the foreground group sleeps reading
//! it: [`Session::secret_prompt`]. The prompt is the cursor's line.
//!
//! Who asks the person is the face's business (URL-mode elicitation and a one-time page):
//! it implements [`AskPerson`]. The core's part is [`Session::ask_person`]: it hands the prompt
//! over, gives up when the prompt goes away (the ask is dropped: its link dies with it) or the
//! call is cancelled, and when a secret comes back it types it and Enter only if the same
//! program still waits at the same prompt with echo off. The secret is held in a
//! [`Zeroizing`] buffer, never logged, never given an echo mask (the terminal does not echo
//! it), and the writer thread zeroes what it wrote.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use zeroize::Zeroizing;

use super::call::SessionCall;
use super::terminal::Session;
use super::waiter::{Look, Waited, Waiter};
use crate::platform::{self, InputMode};
use crate::progress::Progress;

/// How often a pending ask looks whether the prompt is still there when nothing is printed
/// (a program that gives up on its own timer prints first, usually).
const STILL_THERE_EVERY: Duration = Duration::from_millis(200);

/// How long the program is given to take a typed secret (its prompt goes away), and how
/// often that is looked at.
const TAKEN_WITHIN: Duration = Duration::from_secs(2);
const TAKEN_EVERY: Duration = Duration::from_millis(10);

/// The most secret prompts one call hands to a person (a wrong password asked again).
pub const MAX_ASKS: usize = 3;

/// How often a wait looks for a secret prompt beside its own looking (a few `/proc` reads).
const WAIT_LOOKS_EVERY: Duration = Duration::from_millis(200);

/// A program waiting at a secret prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretPrompt {
    /// The session it runs in.
    pub session: String,
    /// The foreground program's name (`sudo`, `python3`, `bash`).
    pub program: String,
    /// The line it asks on (`[sudo] password for ana:`).
    pub prompt: String,
    /// Its process group.
    pub group: i32,
}

/// What the face brings back from the person.
pub enum PersonReply {
    /// The secret, and where to say whether it was typed (`Err`: a sentence why not).
    Secret {
        secret: Zeroizing<Vec<u8>>,
        typed: oneshot::Sender<Result<(), String>>,
    },
    /// The person said no.
    Declined,
    /// The person dismissed the question.
    Cancelled,
    /// Nobody could be asked: why (no client support, the link expired, the request failed).
    NotAsked(String),
}

/// What came of a secret prompt in a call, for its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PersonOutcome {
    /// A person typed the secret; the command went on.
    Answered,
    Declined,
    Cancelled,
    /// The prompt went away before anyone answered (nothing typed).
    PromptGone,
    /// Nobody was asked, and why.
    NotAsked(String),
}

/// Says "typed" to the face, and counts the answer, when dropped still holding its sender:
/// once the secret's bytes are queued for the terminal.
struct Typed<'a> {
    to: Option<oneshot::Sender<Result<(), String>>>,
    answered: Option<&'a AtomicUsize>,
}

impl Drop for Typed<'_> {
    fn drop(&mut self) {
        if let Some(to) = self.to.take() {
            if let Some(answered) = self.answered {
                answered.fetch_add(1, Ordering::Relaxed);
            }
            let _ = to.send(Ok(()));
        }
    }
}

/// The face's way of asking a person for the answer to a secret prompt.
pub trait AskPerson: Send + Sync {
    fn ask<'a>(
        &'a self,
        prompt: &'a SecretPrompt,
    ) -> Pin<Box<dyn Future<Output = PersonReply> + Send + 'a>>;
}

/// An [`AskPerson`] a request can carry (printable, cloneable).
#[derive(Clone)]
pub struct Asker(pub Arc<dyn AskPerson>);

impl fmt::Debug for Asker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Asker")
    }
}

impl SessionCall {
    /// Hands `prompt` to `asker` and waits (until the prompt goes away, the call is
    /// cancelled, or the person answers), then types the secret and Enter if the same
    /// program still waits at the same prompt.
    pub async fn ask_person(
        &self,
        asker: &Asker,
        prompt: &SecretPrompt,
        cancel: &CancellationToken,
        progress: &dyn Progress,
    ) -> PersonOutcome {
        self.ask_person_counted(asker, prompt, cancel, progress, None)
            .await
    }

    /// [`Self::ask_person`], counting an answer in `answered` the moment the secret is in
    /// the terminal. The page is told "typed" at that moment too, before the wait for the
    /// program to take it: a caller that drops this future once the command goes on (a
    /// wait beside it matched the command's next output) must not leave the person told
    /// that nothing was typed, nor its result without "a person answered".
    async fn ask_person_counted(
        &self,
        asker: &Asker,
        prompt: &SecretPrompt,
        cancel: &CancellationToken,
        progress: &dyn Progress,
        answered: Option<&AtomicUsize>,
    ) -> PersonOutcome {
        let gone = async {
            // Progress goes on meanwhile (the prompt line every few seconds), so a client
            // that resets its timeout on progress keeps waiting for the person.
            let waited = Waiter::new(self)
                .cancel(cancel)
                .progress(progress)
                .run(|now| match self.secret_prompt().as_ref() == Some(prompt) {
                    true => Look::Until(now + STILL_THERE_EVERY),
                    false => Look::Done(()),
                })
                .await;
            matches!(waited, Waited::Done(()))
        };
        let reply = tokio::select! {
            reply = asker.0.ask(prompt) => reply,
            prompt_gone = gone => {
                return match prompt_gone {
                    true => PersonOutcome::PromptGone,
                    false => PersonOutcome::Cancelled,
                };
            }
        };
        match reply {
            PersonReply::Secret { secret, typed } => {
                // `type_secret`'s one await is the writer's acknowledgement: dropped there,
                // the bytes are already queued for the terminal, so the guard says typed.
                let mut typed = Typed {
                    to: Some(typed),
                    answered,
                };
                match self.type_secret(prompt, secret).await {
                    Ok(written_at) => {
                        drop(typed);
                        self.wait_taken(prompt, written_at).await;
                        PersonOutcome::Answered
                    }
                    Err(why) => {
                        if let Some(to) = typed.to.take() {
                            let _ = to.send(Err(why));
                        }
                        PersonOutcome::PromptGone
                    }
                }
            }
            PersonReply::Declined => PersonOutcome::Declined,
            PersonReply::Cancelled => PersonOutcome::Cancelled,
            PersonReply::NotAsked(why) => PersonOutcome::NotAsked(why),
        }
    }

    /// Beside a wait (`terminal_wait`, `terminal_watch`, a batch's `wait`): looks for a
    /// secret prompt every 200 ms and hands it to `asker`. Each answer is counted in
    /// `answered` and the looking goes on; resolves with the first outcome that is not an
    /// answer (declined, cancelled, nobody asked); never resolves after [`MAX_ASKS`].
    pub async fn answer_secrets(
        &self,
        asker: &Asker,
        cancel: &CancellationToken,
        progress: &dyn Progress,
        answered: &AtomicUsize,
    ) -> PersonOutcome {
        let mut asks = 0;
        while asks < MAX_ASKS {
            tokio::time::sleep(WAIT_LOOKS_EVERY).await;
            let Some(prompt) = self.secret_prompt() else {
                continue;
            };
            asks += 1;
            match self
                .ask_person_counted(asker, &prompt, cancel, progress, Some(answered))
                .await
            {
                PersonOutcome::Answered | PersonOutcome::PromptGone => {}
                other => return other,
            }
        }
        std::future::pending().await
    }

    /// Types `secret` and Enter, if the same program still waits at the same prompt with
    /// echo off (the output position when written); else a sentence why nothing was typed.
    async fn type_secret(
        &self,
        prompt: &SecretPrompt,
        secret: Zeroizing<Vec<u8>>,
    ) -> Result<u64, String> {
        let bytes = self.secret_line(prompt, secret)?;
        // The writer thread zeroes the bytes once written; no echo mask: nothing is echoed.
        let written_at = self
            .write(bytes, None)
            .await
            .map_err(|e| format!("Typing into the terminal failed: {e}"))?;
        Ok(written_at)
    }

    /// Waits (at most [`TAKEN_WITHIN`]) until the program took a secret written at
    /// `written_at`.
    async fn wait_taken(&self, prompt: &SecretPrompt, written_at: u64) {
        // Until the program took it — nothing left unread, and it printed, or put echo back,
        // or let go of the terminal — a look would see the same prompt still waiting.
        let tty = self.stdin_tty();
        let taken = || {
            let read_all = tty
                .as_deref()
                .and_then(platform::unread_input)
                .is_none_or(|n| n == 0);
            read_all
                && (self.position() > written_at
                    || self.input_mode() != Some(InputMode::Lines { echo: false })
                    || self.foreground_group() != Some(prompt.group))
        };
        let _ = Waiter::new(self)
            .until(Instant::now() + TAKEN_WITHIN)
            .run(|now| match taken() {
                false => Look::Until(now + TAKEN_EVERY),
                true => Look::Done(()),
            })
            .await;
    }
}

impl Session {
    /// `secret` and Enter, the bytes to type, if the same program still waits at `prompt`
    /// with echo off; else a sentence why nothing was typed.
    fn secret_line(
        &self,
        prompt: &SecretPrompt,
        secret: Zeroizing<Vec<u8>>,
    ) -> Result<Vec<u8>, String> {
        if self.secret_prompt().as_ref() != Some(prompt) {
            return Err(format!(
                "{} no longer waits at \"{}\" with echo off; nothing was typed.",
                prompt.program, prompt.prompt
            ));
        }
        let mut bytes = Vec::with_capacity(secret.len() + 1);
        bytes.extend_from_slice(&secret);
        bytes.push(b'\r');
        Ok(bytes)
    }

    /// A person's answer typed from the web page's password field: sent as a person's keys
    /// are (no call's turn: an agent's call that waits meanwhile does not hold it back), only
    /// if the program still waits at `prompt` with echo off; else a sentence why nothing was
    /// typed. The writer thread zeroes the bytes once written.
    pub fn answer_secret(
        &self,
        prompt: &SecretPrompt,
        secret: Zeroizing<Vec<u8>>,
    ) -> Result<(), String> {
        let bytes = self.secret_line(prompt, secret)?;
        self.send_input(bytes);
        Ok(())
    }
}

/// A secret prompt's moment: when it was first seen, for the call's deadline (the time a
/// person took is not the command's).
pub(crate) fn extend(deadline: Instant, asked_at: Instant) -> Instant {
    deadline + asked_at.elapsed()
}
