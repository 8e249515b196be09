//! Who holds a session's keyboard: the agent (the default) or a person who took control
//! from the web page.
//!
//! While a person holds control, the agent's typing (write, keys, exec, clicks, batches) is
//! refused with one sentence from [`Control::agent_may_type`];
//! reads and waits go on. Control ends when the person releases it, when their page goes
//! away, or after [`CONTROL_LEASE`] without a key from them.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::{Fault, Result};

/// How long a person keeps control without pressing a key.
pub const CONTROL_LEASE: Duration = Duration::from_secs(120);

/// One session's keyboard holder. Lives in [`super::terminal::Session`].
#[derive(Default)]
pub(super) struct Control {
    holder: Mutex<Option<Hold>>,
}

struct Hold {
    /// Who holds it (a web viewer's id), so one viewer's release does not end another's hold.
    who: u64,
    last_key: Instant,
}

impl Control {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Hold>> {
        self.holder.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live hold, dropping one whose lease ran out.
    fn current(&self) -> Option<u64> {
        let mut holder = self.lock();
        if holder
            .as_ref()
            .is_some_and(|h| h.last_key.elapsed() >= CONTROL_LEASE)
        {
            *holder = None;
        }
        holder.as_ref().map(|h| h.who)
    }
}

/// Who types into a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controller {
    Agent,
    Person,
}

impl Controller {
    pub fn as_str(self) -> &'static str {
        match self {
            Controller::Agent => "agent",
            Controller::Person => "person",
        }
    }
}

impl Control {
    /// Gives the keyboard to person `who` (replacing any other person's hold).
    pub(super) fn take(&self, who: u64) {
        *self.lock() = Some(Hold {
            who,
            last_key: Instant::now(),
        });
    }

    /// Gives the keyboard to person `who` unless another person holds it; else who does, and
    /// how long ago their last key (or their taking it) was. Atomic: two people asking at
    /// once cannot both get it.
    pub(super) fn try_take(&self, who: u64) -> std::result::Result<(), (u64, Duration)> {
        let mut holder = self.lock();
        if let Some(h) = holder.as_ref()
            && h.who != who
            && h.last_key.elapsed() < CONTROL_LEASE
        {
            return Err((h.who, h.last_key.elapsed()));
        }
        *holder = Some(Hold {
            who,
            last_key: Instant::now(),
        });
        Ok(())
    }

    /// Gives the keyboard back to the agent, if `who` holds it.
    pub(super) fn release(&self, who: u64) {
        let mut holder = self.lock();
        if holder.as_ref().is_some_and(|h| h.who == who) {
            *holder = None;
        }
    }

    /// Whether person `who` holds the keyboard now.
    pub(super) fn holds(&self, who: u64) -> bool {
        self.current() == Some(who)
    }

    /// Who types into the session now.
    pub(super) fn controller(&self) -> Controller {
        match self.current() {
            Some(_) => Controller::Person,
            None => Controller::Agent,
        }
    }

    /// Person `who` pressed a key: true (and the lease renewed) if they hold control.
    pub(super) fn key_from(&self, who: u64) -> bool {
        let mut holder = self.lock();
        match holder.as_mut() {
            Some(h) if h.who == who && h.last_key.elapsed() < CONTROL_LEASE => {
                h.last_key = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// Refuses the agent's typing into session `id` while a person holds the keyboard.
    pub(super) fn agent_may_type(&self, id: &str) -> Result<()> {
        match self.controller() {
            Controller::Agent => Ok(()),
            Controller::Person => Err(Fault::PersonTyping {
                id: id.to_string(),
                lease_secs: CONTROL_LEASE.as_secs(),
            }
            .into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_belongs_to_its_holder() {
        let control = Control::default();
        assert_eq!(control.current(), None);
        *control.lock() = Some(Hold {
            who: 7,
            last_key: Instant::now(),
        });
        assert_eq!(control.current(), Some(7));
    }

    #[test]
    fn an_old_hold_lapses() {
        let control = Control::default();
        let Some(past) = Instant::now().checked_sub(CONTROL_LEASE) else {
            return; // the clock started less than a lease ago; nothing to check
        };
        *control.lock() = Some(Hold {
            who: 1,
            last_key: past,
        });
        assert_eq!(control.current(), None);
    }
}
