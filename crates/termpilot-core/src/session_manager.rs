//! The session registry: ids, names, limits, the idle sweep and reserved ids.
//!
//! Ids are human-readable (`calm-reef`); a `name` is optional and may be used in place of
//! the id. At most `max_sessions` are open. A session that is evicted as idle, or whose shell
//! exits by itself, leaves its id reserved: the next call on it starts a fresh shell of the
//! same shape under the same id and is told so, with the old last screen (the call's own
//! action is not performed). `terminal_stop` ends a session for good. With `evict_lru`, a
//! start at the limit evicts the least recently used session instead of failing (its id is
//! reserved the same way); with `SessionIds::Numbers`, ids are `1`, `2`, … (terminal-use).
//! Every session let go, whichever way, is remembered in [`Ended`] with its last screen (for
//! the web page; `terminal_list` shows live sessions only).
//!
//! The manager's lock is held only to read and change the registry: a start reserves its id
//! (counted against the limit) under it, spawns outside it, then inserts; the idle sweep and
//! eviction read `/proc` outside it; tree kills run on the blocking pool.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;

use crate::config::{Config, SessionIds};
use crate::ended::Ended;
use crate::error::{Error, Fault, Result};
use crate::session::SessionCall;
use crate::session::Size;
use crate::session::shell;
use crate::session::{Exit, Session, Shape, describe_exit};
use tokio_util::sync::CancellationToken;

/// Most reserved ids remembered.
const MAX_RESERVED: usize = 1000;

/// What `terminal_list` says about one session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub id: String,
    pub name: Option<String>,
    pub shell: String,
    pub cwd: String,
    pub alive: bool,
    pub busy: bool,
    /// The command in the terminal's foreground, when it is not the shell.
    pub foreground: Option<String>,
    pub idle_ms: u64,
    pub cols: u16,
    pub rows: u16,
    pub theme: String,
    /// How an ended command session (or shell) ended, e.g. `exit status 3`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exited: Option<String>,
    /// The exit code of an ended command session (or shell), when it exited normally.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The target of a remote session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The sandbox its processes run in: off, read-only or workspace-write.
    pub sandbox: &'static str,
    /// `"person"` while someone holds the keyboard from the web page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<&'static str>,
}

/// What a new session should be.
#[derive(Debug, Clone, Default)]
pub struct StartRequest {
    pub shell: Option<String>,
    pub command: Option<String>,
    pub cwd: Option<PathBuf>,
    pub env: BTreeMap<String, String>,
    pub cols: Option<u16>,
    pub rows: Option<u16>,
    pub scrollback: Option<usize>,
    pub login: Option<bool>,
    pub name: Option<String>,
    pub theme: Option<String>,
    /// A plain-terminal session on another machine (its shell is `remote.kind` there).
    pub remote: Option<crate::session::RemoteShell>,
    /// A stricter sandbox than the server's for this session (never a looser one).
    pub sandbox: Option<crate::sandbox::Mode>,
}

/// What `stop` ended.
pub enum Stopped {
    /// A live session, now killed (its output can still be read for a snapshot), and how
    /// its shell had already ended before the stop, if it had (else the stop ended it).
    Live(Arc<Session>, Option<Exit>),
    /// A reserved id of a session that had already ended (and why); the id is released.
    AlreadyEnded(String),
}

struct Reserved {
    shape: Shape,
    why: String,
    last_screen: String,
    at: std::time::SystemTime,
}

/// A reserved id: a session that ended without being stopped (see [`SessionManager::reserved`]).
#[derive(Debug, Clone)]
pub struct ReservedSummary {
    pub id: String,
    pub name: Option<String>,
    /// Why it ended, e.g. `it was idle for more than 6 h`.
    pub why: String,
    /// The program of a command session (which is not started again on its own).
    pub command: Option<String>,
    pub at: std::time::SystemTime,
}

#[derive(Default)]
struct Inner {
    live: Vec<Arc<Session>>,
    /// Sessions being spawned right now, outside the lock (id → name): they count against
    /// the limit, and their ids and names cannot be taken by another start.
    starting: HashMap<String, Option<String>>,
    reserved: HashMap<String, Reserved>,
    /// The last numeric id handed out (`SessionIds::Numbers`).
    last_number: u64,
    /// Ids of sessions this server reaches elsewhere (on a remote termpilot): never handed
    /// out to a local session.
    foreign: std::collections::HashSet<String>,
}

impl Inner {
    /// True when a session being spawned has this id or name.
    fn starting_uses(&self, id_or_name: &str) -> bool {
        self.starting.contains_key(id_or_name)
            || self
                .starting
                .values()
                .any(|n| n.as_deref() == Some(id_or_name))
    }
}

/// Owns every session of this server.
pub struct SessionManager {
    config: Arc<Config>,
    /// The server's spill files, handed to each session it spawns.
    spills: Arc<crate::host::Spills>,
    inner: Mutex<Inner>,
    /// Bumped whenever a session starts or ends, for whoever lists them live.
    changes: tokio::sync::watch::Sender<u64>,
    /// The sessions that ended, with their last screens (for people; see [`crate::ended`]).
    pub ended: Ended,
}

impl SessionManager {
    pub fn new(config: Arc<Config>, spills: Arc<crate::host::Spills>) -> Self {
        SessionManager {
            config,
            spills,
            inner: Mutex::new(Inner::default()),
            changes: tokio::sync::watch::channel(0).0,
            ended: Ended::default(),
        }
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a new session; the caller has its first turn. Blocking (PTY, fork/exec,
    /// threads, socket): call it off the async workers.
    pub fn start(&self, req: StartRequest) -> Result<SessionCall> {
        let shell = match &req.remote {
            Some(r) => shell::SessionShell {
                program: r.kind.name().into(),
                kind: r.kind,
            },
            None => shell::resolve(req.shell.as_deref(), self.config.shell.as_deref())?,
        };
        // A remote session's cwd is on the target (in `remote`); the transport runs here.
        let cwd = req.cwd.filter(|_| req.remote.is_none());
        let cwd = match cwd.or_else(|| self.config.cwd.clone()) {
            Some(dir) => dir,
            None => std::env::current_dir()
                .map_err(|e| Error::io("The server has no working directory", "pass cwd", e))?,
        };
        if !cwd.is_dir() {
            return Err(Error::InvalidInput(format!(
                "The working directory `{}` does not exist or is not a folder; pass an existing folder as cwd.",
                cwd.display()
            )));
        }
        let shape = Shape {
            shell,
            command: req.command.filter(|c| !c.trim().is_empty()),
            cwd,
            env: crate::sandbox::session_env(req.env, req.sandbox)?
                .into_iter()
                .collect(),
            size: Size {
                cols: req.cols.unwrap_or(self.config.cols),
                rows: req.rows.unwrap_or(self.config.rows),
            },
            scrollback: req.scrollback.unwrap_or(self.config.scrollback),
            login: req.login.unwrap_or(self.config.login),
            name: req.name.filter(|n| !n.trim().is_empty()),
            theme: req.theme.unwrap_or_else(|| "dark".into()),
            remote: req.remote,
        };
        let id = self.reserve_slot(shape.name.as_deref(), |inner| {
            if let Some(name) = &shape.name
                && (inner.starting_uses(name)
                    || inner
                        .live
                        .iter()
                        .any(|s| s.shape.name.as_deref() == Some(name) || &s.id == name))
            {
                return Err(Error::InvalidInput(format!(
                    "A session is already called `{name}`; pick another name or use that session."
                )));
            }
            Ok(match self.config.session_ids {
                SessionIds::Words => new_id(inner),
                SessionIds::Numbers => {
                    inner.last_number += 1;
                    inner.last_number.to_string()
                }
                SessionIds::Kept => loop {
                    let id = format!("k-{}", new_id(inner));
                    if !inner.live.iter().any(|s| s.id == id)
                        && !inner.starting_uses(&id)
                        && !inner.reserved.contains_key(&id)
                    {
                        break id;
                    }
                },
            })
        }, |inner| {
            Fault::SessionLimit {
                open: Self::open(inner),
            }
            .into()
        })?;
        let session = self.spawn_reserved(&id, shape)?;
        self.changed();
        session.try_turn().ok_or_else(|| {
            Error::Other(format!(
                "Session {id} started but another call took it first; call it by its id."
            ))
        })
    }

    /// How many sessions count against the limit: live ones and those being spawned.
    fn open(inner: &Inner) -> usize {
        inner.live.len() + inner.starting.len()
    }

    /// Takes a place under the limit (evicting the least recently used session first when
    /// allowed) and marks the id `pick` chooses as starting; `name` is marked too. `/proc`
    /// reads and screen renders for the eviction happen outside the lock, so the check is
    /// repeated (a bounded number of times) when another start took the freed place.
    fn reserve_slot(
        &self,
        name: Option<&str>,
        mut pick: impl FnMut(&mut Inner) -> Result<String>,
        full: impl Fn(&Inner) -> Error,
    ) -> Result<String> {
        for _ in 0..4 {
            let candidates = {
                let mut inner = self.inner();
                if Self::open(&inner) < self.config.max_sessions {
                    let id = pick(&mut inner)?;
                    inner.starting.insert(id.clone(), name.map(String::from));
                    return Ok(id);
                }
                if !self.config.evict_lru {
                    return Err(full(&inner));
                }
                inner.live.clone()
            };
            if !self.evict_least_recently_used(candidates) {
                return Err(full(&self.inner()));
            }
        }
        Err(full(&self.inner()))
    }

    /// Spawns the session whose id `reserve_slot` marked, outside the lock, then inserts it;
    /// the mark is released either way.
    fn spawn_reserved(&self, id: &str, shape: Shape) -> Result<Arc<Session>> {
        let spawned = Session::spawn(id.to_string(), shape, self.spills.clone());
        let mut inner = self.inner();
        inner.starting.remove(id);
        let session = spawned?;
        inner.live.push(session.clone());
        Ok(session)
    }

    /// A receiver that wakes when a session starts or ends.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Tells live listers the list changed without a start or an end (an ended session's
    /// transcript noted).
    pub fn touch_list(&self) {
        self.changed();
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// Ends the session among `candidates` that has gone longest without a call or output,
    /// keeping its id reserved so the next call on it is told it was evicted; false when none
    /// could be. Sessions inside a call are in use and never chosen. Their idle times (and
    /// the chosen one's last screen) are read outside the manager's lock; the kill itself
    /// runs on the blocking pool.
    fn evict_least_recently_used(&self, candidates: Vec<Arc<Session>>) -> bool {
        let mut by_age: Vec<(Duration, Arc<Session>)> = candidates
            .into_iter()
            .filter(|s| s.try_turn().is_some())
            .map(|s| (s.status().idle, s))
            .collect();
        by_age.sort_by_key(|(idle, _)| std::cmp::Reverse(*idle));
        let Some((_, session)) = by_age.into_iter().next() else {
            return false;
        };
        let last_screen = session.screen_text();
        let why = {
            let mut inner = self.inner();
            let before = inner.live.len();
            inner.live.retain(|s| !Arc::ptr_eq(s, &session));
            if inner.live.len() == before {
                // Another call ended or evicted it meanwhile: its place is free all the same.
                return true;
            }
            let why = format!(
                "it was evicted as the least recently used of {} sessions when another was started",
                self.config.max_sessions
            );
            reserve(&mut inner, &session, why.clone(), last_screen);
            why
        };
        self.ended.record(&session, &why);
        session.spill_owner().remove();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(kill_off_workers(session));
            }
            Err(_) => tracing::warn!(id = %session.id, "evicted outside a runtime; not killed"),
        }
        self.changed();
        true
    }

    /// A call's turn on the live session with this id or name (see [`SessionCall`]): waits,
    /// cancellably, while another call holds it. A reserved id is started afresh (off the
    /// async workers) and the call is told so through [`Error::Respawned`].
    pub async fn call(
        self: &Arc<Self>,
        id: &str,
        cancel: &CancellationToken,
    ) -> Result<SessionCall> {
        let session = match self
            .peek(id)
            // A shell that exited (or was reaped a moment ago) goes the slow way, below.
            .filter(|s| {
                s.is_command() || (s.exit().is_none() && crate::platform::pid_exists(s.pid()))
            }) {
            Some(session) => session,
            None => {
                let (this, asked) = (self.clone(), id.to_string());
                match tokio::task::spawn_blocking(move || this.get(&asked))
                    .await
                    .map_err(|e| {
                        Error::Other(format!("The session could not be started again ({e})."))
                    })? {
                    Err(Error::Respawned(said)) => return Err(self.respawned(id, said).await),
                    other => other?,
                }
            }
        };
        session.turn(cancel).await.ok_or_else(|| {
            Error::Other(
                "The call was cancelled while another call on this session was running.".into(),
            )
        })
    }

    /// What to tell a call whose session was started afresh ([`SessionManager::respawn`]'s
    /// `said`): a remote shell is given its time to connect first, and if it ended at once
    /// (a stopped container, a host gone) the call is told it could not start, the id stays
    /// reserved and nothing claims a fresh shell runs.
    async fn respawned(&self, id: &str, said: String) -> Error {
        let Some(fresh) = self.peek(id).filter(|s| s.shape.remote.is_some()) else {
            return Error::Respawned(said);
        };
        let never = CancellationToken::new();
        // The fresh shell's first turn (nobody else has it yet), for its connect wait.
        let Some(call) = fresh.turn(&never).await else {
            return Error::Respawned(said);
        };
        call.wait_connected(&never).await;
        if !fresh.ending() {
            return Error::Respawned(said);
        }
        call.wait_output_end(Duration::from_secs(2)).await;
        drop(call);
        let why = crate::remote::ending::start_failed(
            &fresh.shape,
            fresh.exit(),
            &fresh.last_screen_text(),
        );
        {
            let mut inner = self.inner();
            inner.live.retain(|s| !Arc::ptr_eq(s, &fresh));
            reserve(
                &mut inner,
                &fresh,
                format!("it could not be started again: {why}"),
                fresh.last_screen_text(),
            );
        }
        kill_off_workers(fresh.clone()).await;
        self.changed();
        Error::Other(format!(
            "Session {} had ended and could not be started again: {why} Its id stays reserved: send the call again once the target runs, or stop the session.",
            fresh.id
        ))
    }

    /// The live session with this id or name. A reserved id is started afresh, and the
    /// call is told so through [`Error::Respawned`].
    pub fn get(&self, id: &str) -> Result<Arc<Session>> {
        let found = self
            .inner()
            .live
            .iter()
            .find(|s| s.id == id || s.shape.name.as_deref() == Some(id))
            .cloned();
        if let Some(session) = found {
            // A shell that exited by itself is retired; its id is reserved and reused now.
            if !session.is_command()
                && let Some(exit) = session.exit_now()
            {
                // After the last byte: the exit can be reaped before the reader has it.
                let last_screen = session.last_screen_text();
                let retired = {
                    let mut inner = self.inner();
                    let before = inner.live.len();
                    inner.live.retain(|s| !Arc::ptr_eq(s, &session));
                    let retired = inner.live.len() < before;
                    if retired {
                        let why = format!("its shell exited ({})", describe_exit(&exit));
                        reserve(&mut inner, &session, why, last_screen);
                    }
                    retired
                };
                if retired {
                    let why = format!("its shell exited ({})", describe_exit(&exit));
                    self.ended.record(&session, &why);
                }
                session.spill_owner().remove();
                // Its processes are gone or going; what it left is killed off the workers.
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(kill_off_workers(session.clone()));
                }
                return self.respawn(&session.id);
            }
            session.touch();
            return Ok(session);
        }
        self.respawn(id)
    }

    fn respawn(&self, id: &str) -> Result<Arc<Session>> {
        // A command session's program is not run again on its own: the id is released.
        let command_ended = {
            let mut inner = self.inner();
            let is_command = inner
                .reserved
                .get(id)
                .is_some_and(|r| r.shape.command.is_some());
            if is_command {
                inner.reserved.remove(id)
            } else {
                None
            }
        };
        if let Some(reserved) = command_ended {
            self.changed();
            let command = reserved.shape.command.unwrap_or_default();
            let closed = match reserved.why.strip_prefix("it was idle for more than ") {
                Some(idle) => format!("was closed after sitting idle for more than {idle}"),
                None => format!("was closed ({})", reserved.why),
            };
            return Err(Fault::CommandSessionReleased {
                id: id.to_string(),
                command,
                closed,
            }
            .into());
        }
        let mut taken = None;
        let reserved_slot = self.reserve_slot(
            None,
            |inner| {
                if inner.starting.contains_key(id) {
                    return Err(Error::Respawned(format!(
                        "Session {id} had ended and is being started again by another call; this call did nothing: send it again."
                    )));
                }
                match inner.reserved.remove(id) {
                    Some(reserved) => {
                        taken = Some(reserved);
                        Ok(id.to_string())
                    }
                    None => Err(Error::UnknownSession(id.to_string())),
                }
            },
            |inner| match inner.reserved.get(id) {
                Some(reserved) => Error::Limit(format!(
                    "Session {id} had ended ({}) and cannot be restarted: the session limit is reached; stop another session first.",
                    reserved.why
                )),
                None if inner.starting.contains_key(id) => Error::Respawned(format!(
                    "Session {id} had ended and is being started again by another call; this call did nothing: send it again."
                )),
                None => Error::UnknownSession(id.to_string()),
            },
        );
        reserved_slot?;
        let Some(reserved) = taken else {
            return Err(Error::UnknownSession(id.to_string()));
        };
        if let Err(e) = self.spawn_reserved(id, reserved.shape.clone()) {
            // The id stays reserved: a later call may try again.
            let mut inner = self.inner();
            if !inner.live.iter().any(|s| s.id == id) {
                inner.reserved.insert(id.to_string(), reserved);
            }
            return Err(e);
        }
        self.changed();
        let screen = if reserved.last_screen.trim().is_empty() {
            String::new()
        } else {
            format!(" Its last screen was:\n{}", reserved.last_screen)
        };
        Err(Error::Respawned(format!(
            "Session {id} had ended ({}); a fresh shell of the same shape now runs under the same id, and this call did nothing: send it again.{screen}",
            reserved.why
        )))
    }

    /// A fresh id in this server's namespace for a session that lives elsewhere (a remote
    /// termpilot's): no local session gets it until [`SessionManager::release_foreign_id`].
    pub fn claim_foreign_id(&self) -> String {
        let mut inner = self.inner();
        let id = new_id(&inner);
        inner.foreign.insert(id.clone());
        id
    }

    /// Gives an id from [`SessionManager::claim_foreign_id`] back.
    pub fn release_foreign_id(&self, id: &str) {
        self.inner().foreign.remove(id);
    }

    /// Ends a session for good (its id is not reserved).
    pub async fn stop(&self, id: &str) -> Result<Stopped> {
        let session = {
            let mut inner = self.inner();
            let found = inner
                .live
                .iter()
                .find(|s| s.id == id || s.shape.name.as_deref() == Some(id))
                .cloned();
            match found {
                Some(s) => {
                    inner.live.retain(|x| x.id != s.id);
                    inner.reserved.remove(&s.id);
                    s
                }
                None => {
                    return match inner.reserved.remove(id) {
                        Some(reserved) => Ok(Stopped::AlreadyEnded(reserved.why)),
                        None => Err(Error::UnknownSession(id.to_string())),
                    };
                }
            }
        };
        let before = session.exit();
        kill_off_workers(session.clone()).await;
        match &before {
            Some(_) => self.ended.record(&session, "it was stopped"),
            None => self.ended.record_as(&session, "it was stopped", "stopped"),
        }
        self.changed();
        Ok(Stopped::Live(session, before))
    }

    /// Kills the session of `call` and starts the same shape again under the same id
    /// (spawned off the async workers); the caller has the fresh session's first turn.
    pub async fn restart(&self, call: &SessionCall) -> Result<SessionCall> {
        let session = call.session().clone();
        kill_off_workers(session.clone()).await;
        let (id, shape) = (session.id.clone(), session.shape.clone());
        let spills = self.spills.clone();
        let fresh = tokio::task::spawn_blocking(move || Session::spawn(id, shape, spills))
            .await
            .map_err(|e| {
                Error::Other(format!("The session could not be started again ({e})."))
            })??;
        let mut inner = self.inner();
        inner.live.retain(|s| s.id != session.id);
        inner.live.push(fresh.clone());
        drop(inner);
        self.changed();
        fresh.try_turn().ok_or_else(|| {
            Error::Other(format!(
                "Session {} restarted but another call took it first; call it again.",
                fresh.id
            ))
        })
    }

    /// The live session with this id or name, without touching it or restarting a reserved
    /// id: for people and resource reads, which must change nothing.
    pub fn peek(&self, id: &str) -> Option<Arc<Session>> {
        self.inner()
            .live
            .iter()
            .find(|s| s.id == id || s.shape.name.as_deref() == Some(id))
            .cloned()
    }

    /// The reserved ids (sessions that ended without being stopped), oldest first.
    pub fn reserved(&self) -> Vec<ReservedSummary> {
        let mut all: Vec<ReservedSummary> = self
            .inner()
            .reserved
            .iter()
            .map(|(id, r)| ReservedSummary {
                id: id.clone(),
                name: r.shape.name.clone(),
                why: r.why.clone(),
                command: r.shape.command.clone(),
                at: r.at,
            })
            .collect();
        all.sort_by_key(|r| r.at);
        all
    }

    /// Every live session, oldest first.
    pub fn list(&self) -> Vec<SessionSummary> {
        let live: Vec<Arc<Session>> = self.inner().live.clone();
        live.iter()
            .map(|s| {
                let status = s.status();
                SessionSummary {
                    id: s.id.clone(),
                    name: s.shape.name.clone(),
                    shell: s.shape.shell.program.display().to_string(),
                    cwd: status.cwd.display().to_string(),
                    alive: status.alive,
                    busy: status.busy,
                    foreground: status.foreground,
                    idle_ms: status.idle.as_millis() as u64,
                    cols: status.size.cols,
                    rows: status.size.rows,
                    theme: s.shape.theme.clone(),
                    exited: s.exit().as_ref().map(describe_exit),
                    exit_code: s.exit().and_then(|e| e.code),
                    host: s.shape.remote.as_ref().map(|r| r.target.to_string()),
                    sandbox: crate::sandbox::session_mode(&s.shape.env).as_str(),
                    controller: (s.controller() == crate::session::Controller::Person)
                        .then_some("person"),
                }
            })
            .collect()
    }

    pub fn count(&self) -> usize {
        self.inner().live.len()
    }

    /// Ends sessions idle longer than the configured time, keeping their ids reserved.
    pub async fn sweep_idle(&self) {
        // Listed under the lock, inspected outside it; the idle clock asks no `/proc` (a
        // session host at rest runs this and little else).
        let live: Vec<Arc<Session>> = self.inner().live.clone();
        let candidates: Vec<Arc<Session>> = live
            .into_iter()
            .filter(|s| s.quiet_for() >= self.config.idle_timeout)
            .collect();
        for session in candidates {
            // A session inside a tool call (a long wait) is in use, not idle; holding its call
            // lock until it is gone keeps a call from starting on it meanwhile.
            let Some(_call) = session.try_turn() else {
                continue;
            };
            if session.quiet_for() < self.config.idle_timeout {
                continue;
            }
            let last_screen = session.screen_text();
            let why = format!(
                "it was idle for more than {}",
                human(self.config.idle_timeout)
            );
            {
                let mut inner = self.inner();
                let before = inner.live.len();
                inner.live.retain(|s| !Arc::ptr_eq(s, &session));
                if inner.live.len() == before {
                    continue;
                }
                reserve(&mut inner, &session, why.clone(), last_screen);
            }
            session.spill_owner().remove();
            kill_off_workers(session.clone()).await;
            self.ended.record(&session, &why);
            self.changed();
        }
    }

    /// The live sessions' ids, sorted, and how long the least quiet of them has been quiet
    /// ([`Session::quiet_for`]; `None` without sessions): cheap, for a caller that asks often.
    pub fn quiet(&self) -> (Vec<String>, Option<Duration>) {
        let live: Vec<Arc<Session>> = self.inner().live.clone();
        let mut ids: Vec<String> = live.iter().map(|s| s.id.clone()).collect();
        ids.sort();
        (ids, live.iter().map(|s| s.quiet_for()).min())
    }

    /// How often the idle sweep should run.
    pub fn sweep_interval(&self) -> Duration {
        (self.config.idle_timeout / 4).clamp(Duration::from_secs(1), Duration::from_secs(60))
    }

    /// The current working directory of session `id` (relative file paths resolve against it).
    pub fn cwd_of(&self, id: &str) -> crate::error::Result<std::path::PathBuf> {
        Ok(self.get(id)?.cwd())
    }

    /// Ends every session.
    pub async fn shutdown(&self) {
        let live: Vec<Arc<Session>> = std::mem::take(&mut self.inner().live);
        for session in live {
            kill_off_workers(session).await;
        }
        self.changed();
    }
}

/// [`Session::kill`] on the blocking pool: its tree kill scans `/proc` and signals, which
/// must not stall an async worker; its bounded wait for the reap is driven from there too.
/// The session's spill files (its `terminal_exec` outputs) go with it.
async fn kill_off_workers(session: Arc<Session>) {
    let owner = session.spill_owner();
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            let id = session.id.clone();
            if let Err(e) =
                tokio::task::spawn_blocking(move || runtime.block_on(session.kill())).await
            {
                tracing::warn!("session {id}: the kill did not finish ({e})");
            }
        }
        Err(_) => session.kill().await,
    }
    owner.remove();
}

fn reserve(inner: &mut Inner, session: &Session, why: String, last_screen: String) {
    if inner.reserved.len() >= MAX_RESERVED
        && let Some(oldest) = inner.reserved.keys().next().cloned()
    {
        inner.reserved.remove(&oldest);
    }
    // A resize since the start outlives the session: the fresh one gets the size it had.
    let mut shape = session.shape.clone();
    let (rows, cols) = session.screen_size();
    if let (Ok(rows), Ok(cols)) = (u16::try_from(rows), u16::try_from(cols)) {
        shape.size = crate::session::Size { cols, rows };
    }
    inner.reserved.insert(
        session.id.clone(),
        Reserved {
            shape,
            why,
            last_screen,
            at: std::time::SystemTime::now(),
        },
    );
}

fn new_id(inner: &Inner) -> String {
    loop {
        let id = petname::petname(2, "-").unwrap_or_else(|| format!("s-{}", std::process::id()));
        let taken = inner
            .live
            .iter()
            .any(|s| s.id == id || s.shape.name.as_deref() == Some(&id))
            || inner.starting_uses(&id)
            || inner.reserved.contains_key(&id)
            || inner.foreign.contains(&id);
        if !taken {
            return id;
        }
    }
}

fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s.is_multiple_of(3600) {
        format!("{}h", s / 3600)
    } else if s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}
