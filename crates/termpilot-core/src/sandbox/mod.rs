//! The sandbox: what termpilot's children may read, write and reach, enforced by the kernel.
//!
//! The whole policy lives here. [`install`] turns the command line's [`Settings`] into the
//! server's [`Policy`] once at start-up (fail closed: a mode the kernel cannot enforce is an
//! error, checked by really applying it in a throw-away child), and keeps it where nothing can
//! change it. Every child is then started as `termpilot __sandbox-exec <policy> -- program…`
//! (see [`wrapper`]): [`tokio_command`] for the one-shot runner, [`pty_command`] for sessions,
//! [`job_prefix`] for jobs. A session may ask for a stricter mode (its `sandbox` parameter,
//! carried in its env as `TERMPILOT_SANDBOX`), never a looser one. [`check_write`] and
//! [`check_read`] hold termpilot's own file tools to the same rules.
//!
//! Linux only (Landlock, seccomp, mount namespaces); elsewhere `--sandbox` is refused.

mod paths;
#[cfg(target_os = "linux")]
pub mod pin;
mod plan;
pub mod policy;
/// No sandbox on this system, so nothing is ever pinned.
#[cfg(not(target_os = "linux"))]
pub mod pin {
    use std::path::{Path, PathBuf};

    #[derive(Debug)]
    pub enum Pinned {}

    impl Pinned {
        pub fn real(&self) -> &Path {
            match *self {}
        }
        pub fn at(&self) -> PathBuf {
            match *self {}
        }
    }
}
#[cfg(target_os = "linux")]
mod reads;
#[cfg(unix)]
pub mod sealed;

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod landlock;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod mounts;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod seccomp;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) mod wrapper;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub use wrapper::from_argv as wrapper_from_argv;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use policy::{Mode, Network, Policy, Settings, WRAPPER_ARG};

use crate::error::{Error, Result};

/// The env variable a session's requested mode travels in, and that every sandboxed process
/// sees (set to its effective mode by the wrapper).
pub const SESSION_ENV: &str = "TERMPILOT_SANDBOX";

/// True where this build can enforce a sandbox.
pub const SUPPORTED: bool = cfg!(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
));

/// The server's policy, set once by [`install`].
static SERVER: OnceLock<Policy> = OnceLock::new();

/// termpilot's own secrets made after [`install`] (the HTTP token file): denied to every
/// sandboxed process and to the file tools, whatever `--deny-read` says.
static OWN_SECRETS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Adds `path` (a file termpilot just wrote, such as the HTTP token) to what no sandboxed
/// process may read; children started from now on are denied it.
pub fn deny_read_also(path: &Path) {
    let real = paths::resolve(&absolute(path));
    let mut own = OWN_SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    if !own.contains(&real) {
        own.push(real);
    }
}

/// The server's policy with termpilot's own secrets added to its deny-read paths.
fn current() -> Option<Policy> {
    let mut p = server()?.clone();
    let own = OWN_SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    for path in own.iter() {
        if !p.deny_read.contains(path) {
            p.deny_read.push(path.clone());
        }
    }
    Some(p)
}

/// The server's policy (mode `off` when it has none, or before [`install`]).
pub fn server() -> Option<&'static Policy> {
    SERVER.get()
}

/// The server's mode.
pub fn server_mode() -> Mode {
    server().map_or(Mode::Off, |p| p.mode)
}

/// Resolves `settings` (write roots default to `cwd`, deny-read paths to the secrets under
/// `$HOME`; the HTTP token file is added by [`deny_read_also`] once written), checks the kernel can enforce them, and makes
/// them the server's policy. The error is one sentence for the person starting termpilot.
pub fn install(settings: &Settings, cwd: Option<&Path>) -> std::result::Result<(), String> {
    if settings.mode == Mode::Off && settings.network == Some(Network::Off) {
        return Err("--network off needs --sandbox read-only or workspace-write; add one of them, or drop --network off.".into());
    }
    if settings.mode != Mode::Off && !SUPPORTED {
        return Err(format!(
            "--sandbox {} needs Linux (Landlock and seccomp) on x86_64 or aarch64 and is not available on this system yet; run without --sandbox.",
            settings.mode.as_str()
        ));
    }
    let policy = resolve(settings, cwd)?;
    if policy.active() {
        verify(&policy)?;
        tracing::info!(mode = policy.mode.as_str(), network = policy.network.as_str(), roots = ?policy.write_roots, "sandbox on");
    }
    let _ = SERVER.set(policy);
    Ok(())
}

fn resolve(settings: &Settings, cwd: Option<&Path>) -> std::result::Result<Policy, String> {
    let mut roots = settings.writable.clone();
    if roots.is_empty() {
        let here = match cwd {
            Some(c) => c.to_path_buf(),
            None => std::env::current_dir()
                .map_err(|e| format!("cannot read the current directory ({e}); pass --writable"))?,
        };
        roots.push(here);
    }
    let mut write_roots = Vec::new();
    for root in roots {
        let real = std::fs::canonicalize(&root).ok().filter(|r| r.is_dir());
        match real {
            Some(r) => write_roots.push(r),
            None if settings.mode == Mode::Off => {}
            None => {
                return Err(format!(
                    "The write root `{}` is not an existing directory; pass an existing directory to --writable.",
                    root.display()
                ));
            }
        }
    }
    let deny = if settings.deny_read.is_empty() {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        policy::default_deny_read(home.as_deref())
    } else {
        settings.deny_read.clone()
    };
    let deny_read = deny.iter().map(|d| paths::resolve(&absolute(d))).collect();
    // Created by the wrapper (0700) when a child first needs it.
    let tmp = paths::resolve(
        &std::env::temp_dir()
            .join(crate::host::spill::user_folder())
            .join(format!("sandbox-{}", std::process::id())),
    );
    let network = settings.network.unwrap_or(if settings.mode == Mode::Off {
        Network::On
    } else {
        Network::Off
    });
    Ok(Policy {
        mode: settings.mode,
        network,
        write_roots,
        deny_read,
        tmp,
        hidden: socket_folders(),
    })
}

/// The folders of the private runtime folder where termpilot keeps sockets and secrets
/// (`attach/`: every session's attach socket; `keep/`: the session hosts' MCP sockets; `run/`:
/// the HTTP token): hidden from every sandboxed program (see `mounts.rs`), since Landlock
/// cannot refuse a `connect()` to a named socket and a client of either socket acts outside
/// the sandbox.
fn socket_folders() -> Vec<PathBuf> {
    let private = paths::resolve(&crate::host::private::location());
    ["attach", "keep", "run"]
        .iter()
        .map(|name| private.join(name))
        .collect()
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    }
}

/// Fails unless the kernel enforces `policy`: the kernel's features first (for a precise
/// sentence), then the real thing in a throw-away wrapper process.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn verify(policy: &Policy) -> std::result::Result<(), String> {
    let mode = policy.mode.as_str();
    let abi = landlock::abi_version();
    if abi < landlock::MIN_ABI {
        return Err(format!(
            "--sandbox {mode} cannot be enforced: {}; run with --sandbox off (nothing would be confined) or on a newer kernel.",
            landlock::missing_abi(abi)
        ));
    }
    if policy.network == Network::Off && !seccomp::available() {
        return Err(format!(
            "--network off cannot be enforced: this kernel has no seccomp filters; pass --network on to keep the --sandbox {mode} file rules with the network open."
        ));
    }
    let out = std::process::Command::new("/proc/self/exe")
        .arg(WRAPPER_ARG)
        .args(policy.to_args())
        .arg(wrapper::PROBE)
        .env_clear()
        .envs(sealed::encode(&[]))
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot start the sandbox self-test ({e})"))?;
    if out.status.success() {
        return Ok(());
    }
    let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let advice = if why.contains("mount namespace") {
        "run it as root or where unprivileged user namespaces are allowed (a sandboxed program could otherwise reach termpilot's own sockets), or run with --sandbox off"
    } else {
        "run with --sandbox off"
    };
    Err(format!(
        "--sandbox {mode} cannot be enforced here ({why}); {advice}."
    ))
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
fn verify(_policy: &Policy) -> std::result::Result<(), String> {
    Err("the sandbox is not available on this system".into())
}

/// The policy for a child of a session whose env asks for `TERMPILOT_SANDBOX`, or of a
/// one-shot (no request): `None` when nothing is confined.
fn policy_for(requested: Option<Mode>) -> Option<Policy> {
    let base = current()?;
    let p = match requested {
        Some(mode) => base.tightened(mode),
        None => base.clone(),
    };
    p.active().then_some(p)
}

fn requested_in(env: &[(String, String)]) -> Option<Mode> {
    env.iter()
        .rev()
        .find(|(k, _)| k == SESSION_ENV)
        .and_then(|(_, v)| Mode::parse(v).ok())
}

/// A session's env with its `sandbox` request recorded, after checking the request can be
/// enforced. A request looser than the server's mode changes nothing.
pub fn session_env(
    mut env: BTreeMap<String, String>,
    requested: Option<Mode>,
) -> Result<BTreeMap<String, String>> {
    let requested = match (requested, env.get(SESSION_ENV)) {
        (Some(m), _) => Some(m),
        (None, Some(v)) => Some(Mode::parse(v).map_err(|e| {
            Error::InvalidInput(format!(
                "env {SESSION_ENV}: {e}, or pass the sandbox parameter."
            ))
        })?),
        (None, None) => None,
    };
    let Some(mode) = requested else {
        return Ok(env);
    };
    if mode != Mode::Off && server_mode() == Mode::Off {
        let Some(p) = policy_for(Some(mode)) else {
            return Err(Error::Other(
                "The sandbox is not set up in this server; start termpilot with --sandbox.".into(),
            ));
        };
        if !SUPPORTED {
            return Err(Error::InvalidInput(
                "sandbox needs Linux; on this system start sessions without it.".into(),
            ));
        }
        verify(&p).map_err(Error::InvalidInput)?;
    }
    env.insert(SESSION_ENV.into(), mode.as_str().into());
    Ok(env)
}

/// The effective mode of a session started with `env`.
pub fn session_mode(env: &[(String, String)]) -> Mode {
    policy_for(requested_in(env)).map_or(Mode::Off, |p| p.mode)
}

fn wrapper_args(policy: &Policy) -> Vec<OsString> {
    let mut a = vec![OsString::from(WRAPPER_ARG)];
    a.extend(policy.to_args());
    a
}

/// The one-shot runner's command for `program`: through the wrapper when sandboxed.
pub fn tokio_command(program: &str) -> tokio::process::Command {
    match policy_for(None) {
        None => tokio::process::Command::new(program),
        Some(p) => {
            let mut cmd = tokio::process::Command::new("/proc/self/exe");
            cmd.args(wrapper_args(&p)).arg(program);
            cmd
        }
    }
}

/// True when `program` and its first argument start the sandbox wrapper.
#[cfg(unix)]
fn is_wrapper(program: &std::ffi::OsStr, first: Option<&std::ffi::OsStr>) -> bool {
    program == "/proc/self/exe" && first.is_some_and(|a| a == WRAPPER_ARG)
}

/// Seals the environment of a command made by [`tokio_command`], once everything else is
/// set and just before it is spawned: when it starts the wrapper, the wrapper's own
/// environment becomes the sealed form of what the program should get (see [`sealed`]), so
/// nothing the caller put in it (`LD_PRELOAD`, …) acts before the sandbox is applied. Assumes
/// the command inherits the server's environment (no `env_clear`). Does nothing otherwise.
#[cfg(unix)]
pub fn seal_tokio(cmd: &mut tokio::process::Command) {
    let std = cmd.as_std();
    if !is_wrapper(std.get_program(), std.get_args().next()) {
        return;
    }
    let env = sealed::inherited_with(std.get_envs());
    cmd.env_clear();
    cmd.envs(sealed::encode(&env));
}

/// As [`seal_tokio`], for a job's detached `sh` wrapper when jobs are sandboxed: `sh` keeps
/// the server's own environment (no caller sets a job's) but a system-only PATH, and carries
/// the sealed copy the sandbox wrapper it starts will apply.
#[cfg(unix)]
pub fn seal_job(cmd: &mut tokio::process::Command) {
    if policy_for(None).is_none() {
        return;
    }
    let env = sealed::inherited_with(cmd.as_std().get_envs());
    cmd.envs(sealed::encode(&env));
    // The unconfined `sh` finds `tee` and `mkfifo` on PATH: only in the system's folders, never
    // in one a sandboxed process could plant a program in (`~/.local/bin` under `--writable ~`).
    // The job's own PATH is in the sealed copy.
    cmd.env("PATH", JOB_WRAPPER_PATH);
}

/// PATH of a sandboxed job's unconfined `sh` wrapper.
#[cfg(unix)]
const JOB_WRAPPER_PATH: &str = "/usr/bin:/bin";

/// As [`seal_tokio`], for a session's command made by [`pty_command`].
#[cfg(unix)]
pub fn seal_pty(cmd: &mut portable_pty::CommandBuilder) {
    let argv = cmd.get_argv();
    if !is_wrapper(&argv[0], argv.get(1).map(OsString::as_os_str)) {
        return;
    }
    let mut keys: std::collections::BTreeSet<OsString> =
        std::env::vars_os().map(|(k, _)| k).collect();
    keys.extend(cmd.iter_full_env_as_str().map(|(k, _)| OsString::from(k)));
    let mut env: Vec<(OsString, OsString)> = keys
        .into_iter()
        .filter_map(|k| cmd.get_env(&k).map(|v| (k.clone(), v.to_os_string())))
        .collect();
    if cmd.get_env("SHELL").is_none() {
        // What portable-pty would have set.
        env.push(("SHELL".into(), cmd.get_shell().into()));
    }
    cmd.env_clear();
    for (k, v) in sealed::encode(&env) {
        cmd.env(k, v);
    }
}

/// A session's command for its shell `program` (the session's `env` may tighten the mode).
pub fn pty_command(program: &Path, env: &[(String, String)]) -> portable_pty::CommandBuilder {
    match policy_for(requested_in(env)) {
        None => portable_pty::CommandBuilder::new(program),
        Some(p) => {
            let mut cmd = portable_pty::CommandBuilder::new("/proc/self/exe");
            cmd.args(wrapper_args(&p));
            cmd.arg(program);
            cmd
        }
    }
}

/// What a job's wrapper puts before the job's own argv: the sandbox wrapper (by the server
/// binary's path, the job outlives the server) with the job's own temp dir `dir/tmp`.
/// Empty when jobs are not sandboxed. Refused when that binary lies where a sandboxed process
/// could replace it: the job's unconfined wrapper would start the replacement.
pub fn job_prefix(dir: &Path) -> Result<Vec<OsString>> {
    let Some(mut p) = policy_for(None) else {
        return Ok(Vec::new());
    };
    p.tmp = dir.join("tmp");
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
    if paths::check_write(&p, &exe).is_ok() {
        return Err(crate::error::Fault::JobBinaryWritable { binary: exe }.into());
    }
    let mut a = vec![exe.into_os_string()];
    a.extend(wrapper_args(&p));
    Ok(a)
}

/// Refuses termpilot's own write to `path` where a sandboxed process could not write.
pub fn check_write(path: &Path) -> Result<()> {
    current().map_or(Ok(()), |p| paths::check_write(&p, path))
}

/// termpilot's own write of `path` for the agent, pinned (see [`pin`]) when the sandbox is on:
/// refused where a sandboxed process could not write, and immune to links swapped in after
/// the check. `None` when nothing is confined (write `path` as it is).
pub fn pin_write(path: &Path, create_dirs: bool) -> Result<Option<pin::Pinned>> {
    match current() {
        #[cfg(target_os = "linux")]
        Some(p) if p.active() => pin::for_write(&p, path, create_dirs).map(Some),
        _ => {
            let _ = (path, create_dirs);
            Ok(None)
        }
    }
}

/// `path` opened for termpilot's own read for the agent: under the sandbox the file actually
/// opened is judged against the deny-read paths (race-free, see `reads.rs`).
pub fn open_read(path: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(target_os = "linux")]
    return reads::open(current().as_ref(), path);
    #[cfg(not(target_os = "linux"))]
    return std::fs::File::open(path);
}

/// Refuses termpilot's own read of `path` inside a deny-read path.
pub fn check_read(path: &Path) -> Result<()> {
    current().map_or(Ok(()), |p| paths::check_read(&p, path))
}

/// Removes the server's private temp dir (at shutdown; jobs keep their own).
pub fn cleanup() {
    if let Some(p) = server() {
        let _ = std::fs::remove_dir_all(&p.tmp);
    }
}

/// A one-line hint when a sandboxed command failed with what looks like a denial.
pub fn denial_hint(mode: Mode, failed: bool, output: &str) -> Option<String> {
    if mode == Mode::Off || !failed {
        return None;
    }
    let denied = [
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
    ];
    denied.iter().any(|d| output.contains(d)).then(|| {
        format!(
            "The {} sandbox may have denied this (writes outside the write roots, reading secrets, the network); the person running termpilot can widen it with --writable, --deny-read or --network on.",
            mode.as_str()
        )
    })
}
