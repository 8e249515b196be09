//! A real `sshd` on a free loopback port for the remote tests, isolated from the machine's
//! own ssh setup: generated host and user keys, its own `sshd_config`, and a client
//! `ssh_config` (passed to termpilot with `--ssh-config`) whose aliases each point at it
//! with their own `UserKnownHostsFile`:
//!
//! - `alpha`, `beta` — two names for the same sshd, key known, the right user key (a fleet);
//! - `stranger` — the host key is not known; `impostor` — another key is recorded for it;
//! - `wrongkey` — a user key the server does not accept; `nowhere` — a port nobody listens on.
//!
//! What runs on the target is pinned too, so no test depends on what is installed on the
//! machine: every ssh session gets an empty `HOME` (no `~/.bashrc` or `~/.profile` of the
//! user, which may put `~/.cargo/bin` on PATH) and [`PATH`], the system's own folders only.
//! A `termpilot` installed by `cargo install` is then never found there, and the plain way is
//! what the target offers; the remote-termpilot tests name the built binary (`--remote-bin`).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The PATH of every ssh session on the test target: the system's folders, none a user
/// installs into (`/usr/local/bin`, `~/.cargo/bin`).
pub const PATH: &str = "/usr/bin:/bin:/usr/sbin:/sbin";

/// A running sshd and the files around it; killed and reaped on drop.
pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    /// The client config naming the aliases.
    pub ssh_config: PathBuf,
    /// The known_hosts file of `alpha` and `beta`.
    pub known_hosts: PathBuf,
    /// The (empty) known_hosts file of `stranger`.
    pub stranger_known_hosts: PathBuf,
    child: Child,
    pub log: Arc<Mutex<String>>,
}

/// The program `name` from `/usr/sbin`, `/usr/bin` or PATH.
pub fn find(name: &str) -> Option<PathBuf> {
    for dir in ["/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/bin"] {
        let p = Path::new(dir).join(name);
        if p.is_file() {
            return Some(p);
        }
    }
    None
}

fn keygen(path: &Path) {
    let status = Command::new(find("ssh-keygen").expect("ssh-keygen"))
        .args([
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "termpilot-test",
            "-f",
        ])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("run ssh-keygen");
    assert!(status.success(), "ssh-keygen failed");
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr").port()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read a generated file")
}

/// The user name the tests log in as (root when the tests run as root).
fn user() -> String {
    let uid = unsafe { libc::getuid() };
    if uid == 0 {
        return "root".into();
    }
    std::env::var("USER").expect("USER names the test user")
}

impl Sshd {
    /// Starts sshd, or returns `None` (after printing why) when OpenSSH is not installed
    /// and this is not CI; in CI a missing sshd fails the test.
    pub fn start() -> Option<Sshd> {
        Self::start_with(&[])
    }

    /// Like [`Sshd::start`], with extra variables for every ssh session (after `HOME` and
    /// `PATH`, which they may override). sshd takes only its first `SetEnv` line, so all
    /// of them go on one.
    pub fn start_with(env: &[(&str, &str)]) -> Option<Sshd> {
        let (Some(sshd), Some(_), Some(_)) = (find("sshd"), find("ssh"), find("ssh-keygen")) else {
            super::procs::skip("sshd, ssh or ssh-keygen is not installed");
            return None;
        };
        // sshd refuses to start as root without its privilege-separation folder, which the
        // openssh-server package creates at boot; create it the same way if it is missing.
        if unsafe { libc::getuid() } == 0 && !Path::new("/run/sshd").is_dir() {
            std::fs::create_dir_all("/run/sshd").expect("create /run/sshd");
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        let home = d.join("home");
        std::fs::create_dir(&home).expect("create the target's HOME");
        for key in ["host_key", "other_host_key", "user_key", "wrong_key"] {
            keygen(&d.join(key));
        }
        std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).expect("authorize");
        let port = free_port();
        let mut config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {hk}\nPidFile none\n\
             AuthorizedKeysFile {ak}\nPermitRootLogin prohibit-password\nStrictModes no\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
             PermitUserEnvironment no\nLogLevel VERBOSE\n",
            hk = d.join("host_key").display(),
            ak = d.join("authorized_keys").display(),
        );
        let home = home.to_str().expect("utf-8 temp path");
        let mut setenv = vec![("HOME", home), ("PATH", PATH)];
        setenv.extend_from_slice(env);
        config.push_str("SetEnv");
        for (k, v) in setenv {
            assert!(
                !v.contains([' ', '"']),
                "a SetEnv value without spaces: {v}"
            );
            config.push_str(&format!(" {k}={v}"));
        }
        config.push('\n');
        std::fs::write(d.join("sshd_config"), config).expect("write sshd_config");

        let entry = |key: &str| {
            let public = read(&d.join(format!("{key}.pub")));
            let mut fields = public.split_whitespace();
            let (kind, blob) = (fields.next().unwrap(), fields.next().unwrap());
            format!("[127.0.0.1]:{port} {kind} {blob}\n")
        };
        let known_hosts = d.join("known_hosts");
        std::fs::write(&known_hosts, entry("host_key")).unwrap();
        let stranger_known_hosts = d.join("stranger_known_hosts");
        std::fs::write(&stranger_known_hosts, "").unwrap();
        std::fs::write(d.join("impostor_known_hosts"), entry("other_host_key")).unwrap();

        let user = user();
        let alias = |names: &str, port: u16, key: &str, known: &Path| {
            format!(
                "Host {names}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  \
                 IdentityFile {id}\n  IdentitiesOnly yes\n  IdentityAgent none\n  \
                 UserKnownHostsFile {kh}\n  GlobalKnownHostsFile /dev/null\n  \
                 UpdateHostKeys no\n  ConnectTimeout 5\n",
                id = d.join(key).display(),
                kh = known.display(),
            )
        };
        let ssh_config = d.join("ssh_config");
        let client = [
            alias("alpha beta", port, "user_key", &known_hosts),
            alias("stranger", port, "user_key", &stranger_known_hosts),
            alias(
                "impostor",
                port,
                "user_key",
                &d.join("impostor_known_hosts"),
            ),
            alias("wrongkey", port, "wrong_key", &known_hosts),
            alias("nowhere", free_port(), "user_key", &known_hosts),
        ]
        .concat();
        std::fs::write(&ssh_config, client).unwrap();

        let mut child = Command::new(sshd);
        // Its own process group, so the connection handlers it forks die with it.
        std::os::unix::process::CommandExt::process_group(&mut child, 0);
        let mut child = child
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sshd");
        let log = Arc::new(Mutex::new(String::new()));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("Server listening on") {
                    let _ = ready_tx.send(());
                }
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let sshd = Sshd {
            dir,
            port,
            ssh_config,
            known_hosts,
            stranger_known_hosts,
            child,
            log,
        };
        if ready_rx.recv_timeout(Duration::from_secs(20)).is_err() {
            panic!("sshd did not start: {}", sshd.log.lock().unwrap());
        }
        Some(sshd)
    }

    /// The `--ssh-config` argument for termpilot.
    pub fn config_arg(&self) -> &str {
        self.ssh_config.to_str().expect("utf-8 temp path")
    }

    /// The sshd's pid (for tests that kill it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}
