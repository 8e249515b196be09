//! The resources capability: `resources/list`, `resources/read` and
//! `notifications/resources/list_changed`, built once for every kind of resource.
//!
//! A [`Provider`] offers one family of URIs (`termpilot://sessions/…`, `termpilot://jobs/…`,
//! `skill://…`); [`Resources`] asks each in turn. A compatibility preset adds its own
//! providers with [`Resources::add`]. Reading a resource never changes anything: no read
//! cursor moves, no idle timer is reset, no ended session is restarted.
//!
//! Clients are told when the list changes: those that completed an `initialize` handshake
//! (2025 revisions, stdio or HTTP with `Mcp-Session-Id`) through their session, and those of
//! the stateless 2026-07-28 revision that opened a `subscriptions/listen` stream asking for
//! `resourcesListChanged`, on that stream. A session starting or ending wakes the notifier
//! at once; jobs (which live on disk and end on their own) are looked at every [`JOB_CHECK`].

mod jobs;
mod sessions;
mod skill;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::model::{
    GetSkillResult, ListResourcesResult, ListSkillsResult, ReadResourceResult, Resource,
    ResourceContents,
};
use rmcp::service::SubscriptionSink;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use termpilot_core::Core;

/// How often the job folder is looked at for jobs that came or went.
pub const JOB_CHECK: Duration = Duration::from_secs(2);

/// One family of resources.
pub trait Provider: Send + Sync {
    /// The resources offered now.
    fn list(&self, core: &Core) -> Vec<Resource>;
    /// The contents of `uri` if it belongs to this provider (`None` when it does not); an
    /// `Err` is a sentence saying what was wrong.
    fn read(&self, core: &Core, uri: &str) -> Option<Result<Vec<ResourceContents>, String>>;
}

/// Every provider, and the clients to tell when the list changes.
pub struct Resources {
    providers: Vec<Box<dyn Provider>>,
    /// The skills among them, for `skills/list` and `skills/get`.
    skills: Vec<skill::SkillDoc>,
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    /// Open `subscriptions/listen` streams (2026-07-28).
    sinks: Arc<Mutex<Vec<SubscriptionSink>>>,
    notifier: OnceLock<()>,
}

impl Resources {
    /// Sessions' screens and screenshots, jobs' logs and termpilot's own skill.
    pub fn standard() -> Self {
        let mut resources = Resources::empty();
        resources.add(Box::new(sessions::Sessions));
        resources.add(Box::new(jobs::JobLogs));
        resources.add_skill(crate::skills::SKILL_MD);
        resources
    }

    /// Only the skill whose `SKILL.md` is `md` (a preset's: its seed has no other resource).
    pub fn only_skill(md: &'static str) -> Self {
        let mut resources = Resources::empty();
        resources.add_skill(md);
        resources
    }

    fn empty() -> Self {
        Resources {
            providers: Vec::new(),
            skills: Vec::new(),
            peers: Default::default(),
            sinks: Default::default(),
            notifier: OnceLock::new(),
        }
    }

    /// Adds a provider (asked after the ones already there).
    pub fn add(&mut self, provider: Box<dyn Provider>) {
        self.providers.push(provider);
    }

    /// Adds a skill: a resource, and an entry of `skills/list`.
    fn add_skill(&mut self, md: &'static str) {
        let doc = skill::SkillDoc::new(md);
        self.skills.push(doc);
        self.add(Box::new(doc));
    }

    /// `skills/list`: every skill served, in one page.
    pub fn list_skills(&self) -> ListSkillsResult {
        ListSkillsResult::with_all_items(self.skills.iter().map(|s| s.entry()).collect())
    }

    /// `skills/get`: the skill whose `SKILL.md` is at `uri`.
    pub fn get_skill(&self, uri: &str) -> Result<GetSkillResult, McpError> {
        self.skills
            .iter()
            .find(|s| s.uri() == uri)
            .map(|s| GetSkillResult::new(s.entry()))
            .ok_or_else(|| {
                let known: Vec<String> = self.skills.iter().map(|s| s.uri()).collect();
                McpError::invalid_params(
                    format!(
                        "No skill is served at {uri}; skills/list shows them ({}).",
                        known.join(", ")
                    ),
                    None,
                )
            })
    }

    pub fn list(&self, core: &Core) -> ListResourcesResult {
        ListResourcesResult::with_all_items(self.all(core))
    }

    fn all(&self, core: &Core) -> Vec<Resource> {
        self.providers.iter().flat_map(|p| p.list(core)).collect()
    }

    pub fn read(&self, core: &Core, uri: &str) -> Result<ReadResourceResult, McpError> {
        for provider in &self.providers {
            match provider.read(core, uri) {
                Some(Ok(contents)) => return Ok(ReadResourceResult::new(contents)),
                Some(Err(problem)) => return Err(McpError::resource_not_found(problem, None)),
                None => {}
            }
        }
        Err(McpError::resource_not_found(
            format!("No resource has the URI `{uri}`; call resources/list to see them."),
            None,
        ))
    }

    /// Remembers a client to notify, and starts the notifier on first use.
    pub fn remember(&self, peer: Peer<RoleServer>, core: &Arc<Core>, me: &Arc<Resources>) {
        self.peers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(peer);
        self.start_notifier(core, me);
    }

    /// Remembers a `subscriptions/listen` stream to notify (until it closes).
    pub fn listen(&self, sink: SubscriptionSink, core: &Arc<Core>, me: &Arc<Resources>) {
        self.sinks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(sink);
        self.start_notifier(core, me);
    }

    /// Starts the notifier (once) with its first look at the URIs, at a client's `initialize`:
    /// a job or session started by a call that races the client's `initialized` notification
    /// is then a change to announce, not part of the first look.
    pub fn start_notifier(&self, core: &Arc<Core>, me: &Arc<Resources>) {
        self.notifier.get_or_init(|| {
            // The first look is taken here, not when the task first runs: on a loaded
            // machine a job started meanwhile would be in that later look, and its coming
            // never announced.
            let first = uri_set(me, core);
            let weak = Arc::downgrade(me);
            let core = Arc::downgrade(core);
            tokio::spawn(notify_changes(weak, core, first));
        });
    }
}

/// Every resource URI now.
fn uri_set(resources: &Resources, core: &Core) -> BTreeSet<String> {
    resources.all(core).into_iter().map(|res| res.uri).collect()
}

/// Tells every remembered client when the set of resource URIs changes.
async fn notify_changes(
    resources: std::sync::Weak<Resources>,
    core: std::sync::Weak<Core>,
    mut last: BTreeSet<String>,
) {
    let Some(mut changes) = core.upgrade().map(|c| c.sessions.changes()) else {
        return;
    };
    loop {
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            _ = tokio::time::sleep(JOB_CHECK) => {}
        }
        let (Some(r), Some(c)) = (resources.upgrade(), core.upgrade()) else {
            return;
        };
        let now = uri_set(&r, &c);
        if now == last {
            continue;
        }
        last = now;
        let peers: Vec<Peer<RoleServer>> =
            r.peers.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut gone = Vec::new();
        for (i, peer) in peers.iter().enumerate() {
            if peer.is_transport_closed() || peer.notify_resource_list_changed().await.is_err() {
                gone.push(i);
            }
        }
        let sinks: Vec<SubscriptionSink> =
            r.sinks.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut closed = Vec::new();
        for (i, sink) in sinks.iter().enumerate() {
            if sink.notify_resource_list_changed().await.is_err() {
                closed.push(i);
            }
        }
        if !closed.is_empty() {
            drop_seen(
                &mut r.sinks.lock().unwrap_or_else(|e| e.into_inner()),
                &closed,
            );
        }
        if !gone.is_empty() {
            drop_seen(
                &mut r.peers.lock().unwrap_or_else(|e| e.into_inner()),
                &gone,
            );
        }
    }
}

/// Drops the entries at `indexes` of the first entries of `list` (later ones were appended
/// after they were looked at, and stay).
fn drop_seen<T>(list: &mut Vec<T>, indexes: &[usize]) {
    let mut index = 0;
    list.retain(|_| {
        let keep = !indexes.contains(&index);
        index += 1;
        keep
    });
}
