//! The sandbox policy as values: the modes, the network switch, what the server was asked
//! for, the resolved policy a child runs under, and its encoding on the wrapper's command line.
//!
//! A [`Policy`] is only ever made tighter ([`Policy::tightened`]); nothing builds a looser one
//! from a stricter one. It travels to the child on its argv (never through a file a sandboxed
//! process could write).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// What sandboxed processes may write (the `sandbox` parameter's JSON form is the face's,
/// `mcp::wire::sandbox::Mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// No sandbox.
    #[default]
    Off,
    /// Read anywhere but the deny-read paths; write only under the write roots, the private
    /// temp dir, the terminal and /dev/null.
    WorkspaceWrite,
    /// As workspace-write without the write roots.
    ReadOnly,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::WorkspaceWrite => "workspace-write",
            Mode::ReadOnly => "read-only",
        }
    }

    pub fn parse(s: &str) -> Result<Mode, String> {
        match s.trim() {
            "off" => Ok(Mode::Off),
            "workspace-write" => Ok(Mode::WorkspaceWrite),
            "read-only" => Ok(Mode::ReadOnly),
            other => Err(format!(
                "`{other}` is not a sandbox mode; use off, read-only or workspace-write"
            )),
        }
    }

    /// How strict the mode is: a higher number allows less.
    fn strictness(self) -> u8 {
        match self {
            Mode::Off => 0,
            Mode::WorkspaceWrite => 1,
            Mode::ReadOnly => 2,
        }
    }

    /// The stricter of the two.
    pub fn tighter(self, other: Mode) -> Mode {
        if other.strictness() > self.strictness() {
            other
        } else {
            self
        }
    }
}

/// Whether sandboxed processes may use the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    On,
    Off,
}

impl Network {
    pub fn as_str(self) -> &'static str {
        match self {
            Network::On => "on",
            Network::Off => "off",
        }
    }

    pub fn parse(s: &str) -> Result<Network, String> {
        match s.trim() {
            "on" => Ok(Network::On),
            "off" => Ok(Network::Off),
            other => Err(format!("`{other}` is not a network setting; use on or off")),
        }
    }
}

/// What the command line asked for, before anything is checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    pub mode: Mode,
    /// `--writable`; empty = the server's working directory.
    pub writable: Vec<PathBuf>,
    /// `--network`; `None` = off whenever the sandbox is on.
    pub network: Option<Network>,
    /// `--deny-read`; empty = [`default_deny_read`].
    pub deny_read: Vec<PathBuf>,
}

/// Secrets no sandboxed process may read, under `home`. (termpilot's own HTTP token file is
/// denied wherever it is, whatever `--deny-read` says: `sandbox::deny_read_also`.)
pub fn default_deny_read(home: Option<&Path>) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Some(home) = home {
        for rel in [
            ".ssh",
            ".gnupg",
            ".aws",
            ".config/gcloud",
            ".kube",
            ".docker/config.json",
            ".netrc",
        ] {
            paths.push(home.join(rel));
        }
    }
    paths
}

/// The policy a child runs under: every path absolute and resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub mode: Mode,
    pub network: Network,
    /// Written freely in workspace-write (except `.git/hooks` and `.git/config` in them).
    pub write_roots: Vec<PathBuf>,
    /// Neither read nor written.
    pub deny_read: Vec<PathBuf>,
    /// The private temporary directory (`TMPDIR`), writable in every mode.
    pub tmp: PathBuf,
    /// Folders covered by an empty read-only tmpfs (termpilot's socket folders: see
    /// [`super::mounts`]), so the program cannot name a socket in them.
    pub hidden: Vec<PathBuf>,
}

/// The wrapper's subcommand: `termpilot __sandbox-exec <policy> -- program args…`.
pub const WRAPPER_ARG: &str = "__sandbox-exec";

impl Policy {
    /// True when children must be started through the wrapper.
    pub fn active(&self) -> bool {
        self.mode != Mode::Off
    }

    /// This policy with `mode` applied when it is stricter; never looser.
    pub fn tightened(&self, mode: Mode) -> Policy {
        let mut p = self.clone();
        let was_off = p.mode == Mode::Off;
        p.mode = p.mode.tighter(mode);
        if was_off && p.mode != Mode::Off {
            // A sandbox switched on for one session starts with the network off.
            p.network = Network::Off;
        }
        p
    }

    /// The wrapper's arguments after [`WRAPPER_ARG`], up to and including `--`.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec![
            "--mode".into(),
            self.mode.as_str().into(),
            "--network".into(),
            self.network.as_str().into(),
            "--tmp".into(),
            self.tmp.clone().into(),
        ];
        for w in &self.write_roots {
            a.push("--write".into());
            a.push(w.clone().into());
        }
        for d in &self.deny_read {
            a.push("--deny".into());
            a.push(d.clone().into());
        }
        for h in &self.hidden {
            a.push("--hide".into());
            a.push(h.clone().into());
        }
        a.push("--".into());
        a
    }

    /// Parses [`Policy::to_args`] followed by the program's argv.
    pub fn from_args(args: &[OsString]) -> Result<(Policy, Vec<OsString>), String> {
        let mut mode = None;
        let mut network = None;
        let mut tmp = None;
        let mut write_roots = Vec::new();
        let mut deny_read = Vec::new();
        let mut hidden = Vec::new();
        let mut i = 0;
        let text = |v: &OsStr| v.to_str().map(str::to_string).unwrap_or_default();
        while i < args.len() {
            let key = args[i].to_str().unwrap_or("");
            if key == "--" {
                let rest = args[i + 1..].to_vec();
                if rest.is_empty() {
                    return Err("no program to run after `--`".into());
                }
                let policy = Policy {
                    mode: mode.ok_or("--mode is missing")?,
                    network: network.ok_or("--network is missing")?,
                    write_roots,
                    deny_read,
                    tmp: tmp.ok_or("--tmp is missing")?,
                    hidden,
                };
                return Ok((policy, rest));
            }
            let value = args
                .get(i + 1)
                .ok_or_else(|| format!("{key} needs a value"))?;
            match key {
                "--mode" => mode = Some(Mode::parse(&text(value))?),
                "--network" => network = Some(Network::parse(&text(value))?),
                "--tmp" => tmp = Some(PathBuf::from(value)),
                "--write" => write_roots.push(PathBuf::from(value)),
                "--deny" => deny_read.push(PathBuf::from(value)),
                "--hide" => hidden.push(PathBuf::from(value)),
                other => return Err(format!("unknown sandbox argument `{other}`")),
            }
            i += 2;
        }
        Err("`--` and the program to run are missing".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: Mode, network: Network) -> Policy {
        Policy {
            mode,
            network,
            write_roots: vec!["/w".into()],
            deny_read: vec!["/home/u/.ssh".into()],
            tmp: "/tmp/t".into(),
            hidden: vec!["/run/user/1/termpilot/attach".into()],
        }
    }

    #[test]
    fn tightening_never_loosens() {
        let ww = policy(Mode::WorkspaceWrite, Network::On);
        assert_eq!(ww.tightened(Mode::ReadOnly).mode, Mode::ReadOnly);
        assert_eq!(ww.tightened(Mode::Off).mode, Mode::WorkspaceWrite);
        assert_eq!(ww.tightened(Mode::ReadOnly).network, Network::On);
        let ro = policy(Mode::ReadOnly, Network::Off);
        assert_eq!(ro.tightened(Mode::WorkspaceWrite).mode, Mode::ReadOnly);
        assert_eq!(ro.tightened(Mode::Off).mode, Mode::ReadOnly);
        let off = policy(Mode::Off, Network::On);
        let t = off.tightened(Mode::ReadOnly);
        assert_eq!((t.mode, t.network), (Mode::ReadOnly, Network::Off));
    }

    #[test]
    fn argv_round_trip() {
        let p = policy(Mode::WorkspaceWrite, Network::Off);
        let mut args = p.to_args();
        args.push("sh".into());
        args.push("-c".into());
        let (back, rest) = Policy::from_args(&args).unwrap();
        assert_eq!(back, p);
        assert_eq!(rest, vec![OsString::from("sh"), OsString::from("-c")]);
        assert!(Policy::from_args(&p.to_args()).is_err(), "no program");
        assert!(Policy::from_args(&["--mode".into()]).is_err());
    }

    #[test]
    fn modes_parse() {
        assert_eq!(Mode::parse("read-only").unwrap(), Mode::ReadOnly);
        assert!(Mode::parse("strict").unwrap_err().contains("read-only"));
        assert!(Network::parse("maybe").is_err());
    }
}
