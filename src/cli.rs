//! The command line: flags and environment variables into one [`Config`].
//!
//! `termpilot` and `termpilot serve` serve MCP on stdio. The serving flags belong to those two
//! (`termpilot --cols 100` and `termpilot serve --cols 100` mean the same); `attach` and
//! `skills-dir` take only their own, so their `--help` lists only what they use.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use termpilot_core::Config;
use termpilot_core::config;

use crate::mcp::registry::Surface;
use termpilot_core::sandbox;

#[derive(Debug, Parser)]
#[command(
    name = "termpilot",
    version,
    about = "Serves the Model Context Protocol and gives AI agents real terminals.",
    long_about = None
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub serve: ServeArgs,
    #[command(flatten)]
    pub http: HttpArgs,
}

/// `termpilot serve [OPTIONS]`: the same serving options as plain `termpilot`.
#[derive(Debug, Args)]
pub struct ServeCommand {
    #[command(flatten)]
    pub serve: ServeArgs,
    #[command(flatten)]
    pub http: HttpArgs,
}

/// Serving over HTTP and the web page (see `src/mcp/http.rs`).
#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Serve MCP over Streamable HTTP at /mcp and the web page at /, instead of stdio
    /// (default address 127.0.0.1:8765; write --http=ADDR when an argument follows).
    #[arg(long, value_name = "ADDR", num_args = 0..=1,
          default_missing_value = crate::mcp::http::DEFAULT_ADDR)]
    pub http: Option<String>,
    /// Allow --http/--web on an address that is not loopback (anyone who reaches it with the
    /// token can run commands as you).
    #[arg(long)]
    pub http_allow_remote: bool,
    /// Refused: a token on the command line is readable by every local user (`ps`); use
    /// TERMPILOT_TOKEN or --token-file.
    #[arg(long, hide = true, value_name = "TOKEN", num_args = 0..=1, default_missing_value = "")]
    pub token: Option<String>,
    /// Read the bearer token HTTP clients and the page's login must present from this file
    /// (yours, mode 600). Else TERMPILOT_TOKEN; else 256 random bits. Either way the token
    /// is written to a 0600 file that `termpilot token` prints.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Serve only the web page on ADDR, next to MCP on stdio (default 127.0.0.1:8765).
    #[arg(long, value_name = "ADDR", num_args = 0..=1,
          default_missing_value = crate::mcp::http::DEFAULT_ADDR)]
    pub web: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP on stdio (the default): `termpilot serve` is `termpilot`.
    Serve(Box<ServeCommand>),
    /// Join a session from this terminal: its screen, then live input and output; Ctrl+]
    /// detaches.
    ///
    /// Shares a running session with the agent: you see its current screen and recent
    /// scrollback, then everything it prints, and what you type goes to its program (the
    /// agent keeps working alongside you). Press Ctrl+] to detach: the session goes on
    /// running. terminal_start (the `attach` field of its result) gives the exact command.
    /// At most 16 people are attached to one session at a time.
    Attach {
        /// The session id, as terminal_start and terminal_list show it.
        id: String,
        /// The session's Unix socket, as given in terminal_start's attach command. Without
        /// it, the socket is looked up by id in the private folder; it is needed when
        /// several running servers have a session of this id.
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// Resize the session to this terminal's window, now and whenever the window
        /// changes size (the agent then sees the same size). Without it the session keeps
        /// its own size.
        #[arg(long)]
        resize: bool,
    },
    /// Print the token of your running `--http` or `--web` server (for a client's
    /// Authorization header, or the page's login).
    ///
    /// Reads the server's 0600 token file (`$XDG_RUNTIME_DIR/termpilot/run/`, else
    /// `<temp>/termpilot-<uid>/run/`): the token alone on stdout, where it came from and the
    /// page's login URL on stderr.
    Token {
        /// The server's port (default: 8765, else the one server of yours that is running).
        #[arg(long, value_name = "N")]
        port: Option<u16>,
    },
    /// List your kept sessions (terminal_start with keep: true): id, name, state, when each
    /// ends if left alone, and its folder. Starts nothing.
    Sessions {
        /// Ask only the session host listening on this socket.
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
    },
    /// The session host of kept sessions, started by a server when one is needed.
    #[command(name = "__session-host", hide = true)]
    SessionHost(crate::keep::host::HostArgs),
    /// Print the folder holding termpilot's Agent Skill (copy `termpilot/` from it into your
    /// client's skills folder).
    SkillsDir,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Shell for new sessions (default: $SHELL, then bash, then sh).
    #[arg(long, env = "TERMPILOT_SHELL")]
    pub shell: Option<String>,
    /// Working directory for new sessions and commands (default: where termpilot starts).
    #[arg(long, env = "TERMPILOT_CWD")]
    pub cwd: Option<PathBuf>,
    /// Terminal width of new sessions.
    #[arg(long, default_value_t = config::DEFAULT_COLS,
          value_parser = clap::value_parser!(u16).range(2..=1000))]
    pub cols: u16,
    /// Terminal height of new sessions.
    #[arg(long, default_value_t = config::DEFAULT_ROWS,
          value_parser = clap::value_parser!(u16).range(1..=500))]
    pub rows: u16,
    /// Scrollback lines kept by each session.
    #[arg(long, default_value_t = config::DEFAULT_SCROLLBACK as u64,
          value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub scrollback: u64,
    /// Start shells as login shells (they read your profile files).
    #[arg(long, env = "TERMPILOT_LOGIN")]
    pub login: bool,
    /// Most sessions open at once.
    #[arg(long, env = "TERMPILOT_MAX_SESSIONS",
          default_value_t = config::DEFAULT_MAX_SESSIONS as u64,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_sessions: u64,
    /// End sessions idle this long: seconds, or a number with s, m or h (e.g. 30m); default 6h.
    #[arg(long, env = "TERMPILOT_IDLE_TIMEOUT", value_parser = parse_duration)]
    pub idle_timeout: Option<Duration>,
    /// Tools registered directly with full schemas, comma-separated (`all` = every tool,
    /// no terminal_extra). The rest sit behind terminal_extra.
    #[arg(long, env = "TERMPILOT_CORE_TOOLS")]
    pub core_tools: Option<String>,
    /// Tools removed entirely, comma-separated. An explicitly empty value registers every
    /// tool directly with its full schema, as smart-terminal-mcp does.
    #[arg(long, env = "TERMPILOT_DISABLED_TOOLS")]
    pub disabled_tools: Option<String>,
    /// Where jobs and locks are kept (default: $XDG_STATE_HOME/termpilot).
    #[arg(long, env = "TERMPILOT_STATE_DIR")]
    pub state_dir: Option<PathBuf>,
    /// An option for every ssh (KEY=VALUE, repeatable), e.g. ConnectTimeout=5.
    /// BatchMode=yes and StrictHostKeyChecking=yes are fixed.
    #[arg(long = "ssh-option", value_name = "KEY=VALUE",
          value_parser = parse_ssh_option)]
    pub ssh_options: Vec<String>,
    /// The ssh config file for every ssh (`ssh -F`; default: ~/.ssh/config).
    #[arg(long, env = "TERMPILOT_SSH_CONFIG")]
    pub ssh_config: Option<PathBuf>,
    /// termpilot on remote targets (a path there), started over the transport to forward
    /// calls that name a host (default: `termpilot` when the target has it on PATH).
    #[arg(long, env = "TERMPILOT_REMOTE_BIN", value_parser = parse_remote_bin)]
    pub remote_bin: Option<String>,
    /// Confine every process termpilot starts, enforced by the kernel (Linux): off,
    /// read-only or workspace-write.
    #[arg(long, env = "TERMPILOT_SANDBOX", value_parser = sandbox::Mode::parse,
          default_value = "off")]
    pub sandbox: sandbox::Mode,
    /// A directory sandboxed processes may write (repeatable; default: the working directory).
    #[arg(long = "writable", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// Network for sandboxed processes: on or off (default: off when sandboxed).
    #[arg(long, value_parser = sandbox::Network::parse)]
    pub network: Option<sandbox::Network>,
    /// A path sandboxed processes may not read (repeatable; default: ~/.ssh, ~/.gnupg,
    /// ~/.aws, ~/.config/gcloud, ~/.kube, ~/.docker/config.json, ~/.netrc, the token file).
    #[arg(long = "deny-read", value_name = "PATH")]
    pub deny_read: Vec<PathBuf>,
    /// Most bytes one spill file of a one-shot command's stream takes; the rest is dropped
    /// and the result says so (spillTruncated).
    #[arg(long, env = "TERMPILOT_MAX_SPILL_BYTES",
          default_value_t = config::DEFAULT_MAX_SPILL_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_spill_bytes: u64,
    /// Serve another server's exact surface instead of termpilot's: smart-terminal,
    /// terminal-use, cowork or director-shell (tool names, parameters, results, limits, env
    /// variables).
    #[arg(long, env = "TERMPILOT_COMPAT",
          value_parser = clap::builder::PossibleValuesParser::new(crate::mcp::compat::NAMES))]
    pub compat: Option<String>,
    /// At the session limit, end the least recently used session (its id answers the next
    /// call with a notice and a fresh shell) instead of refusing the new one.
    #[arg(long, env = "TERMPILOT_EVICT_LRU")]
    pub evict_lru: bool,
    /// Who answers a password prompt (echo off): `secrets` sends the person to a one-time page
    /// through URL elicitation, `off` leaves it to the agent (default secrets; a --compat
    /// preset keeps its seed's behaviour, off, unless this is given).
    #[arg(long, value_name = "WHAT",
          value_parser = clap::builder::PossibleValuesParser::new(crate::mcp::secrets::MODES))]
    pub ask_person: Option<String>,
    /// Keep every native session in your session host, as terminal_start's keep: true does:
    /// it outlives this server and its client (README "Terminals that outlive the client").
    #[arg(long, env = "TERMPILOT_KEEP_SESSIONS")]
    pub keep_sessions: bool,
    /// End kept sessions after this long with no call, no output and no attached person:
    /// seconds, or a number with s, m or h; default 24h.
    #[arg(long, env = "TERMPILOT_KEEP_IDLE", value_parser = parse_duration)]
    pub keep_idle: Option<Duration>,
}

/// Which serving settings were given on the command line or in their environment
/// variables, so a `--compat` preset's own defaults yield to them.
pub fn explicit(matches: &clap::ArgMatches) -> crate::mcp::compat::Explicit {
    use clap::parser::ValueSource;
    let levels: Vec<&clap::ArgMatches> = std::iter::once(matches)
        .chain(matches.subcommand().map(|(_, m)| m))
        .collect();
    let source = |id: &str| -> Option<ValueSource> {
        levels
            .iter()
            .filter_map(|m| m.try_get_raw(id).ok().flatten().and(m.value_source(id)))
            .find(|s| *s != ValueSource::DefaultValue)
    };
    let given = |id: &str| source(id).is_some();
    crate::mcp::compat::Explicit {
        shell_flag: source("shell") == Some(ValueSource::CommandLine),
        max_sessions: given("max_sessions"),
        idle_timeout: given("idle_timeout"),
        state_dir: given("state_dir"),
        surface: given("core_tools") || given("disabled_tools"),
    }
}

/// The first option given on the command line at the top level (before any subcommand), as
/// its long flag name.
pub fn given_on_command_line(matches: &clap::ArgMatches) -> Option<String> {
    matches
        .ids()
        .find(|id| {
            matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
        })
        .map(|id| id.as_str().replace('_', "-"))
}

/// `--remote-bin`: a path on the target, checked at start-up.
fn parse_remote_bin(s: &str) -> Result<String, String> {
    termpilot_core::remote::check_remote_bin(s).map_err(|e| e.to_string())?;
    Ok(s.to_string())
}

/// One `--ssh-option`, checked at start-up.
fn parse_ssh_option(s: &str) -> Result<String, String> {
    let options = termpilot_core::remote::RemoteOptions {
        ssh_options: vec![s.to_string()],
        ..Default::default()
    };
    options.check().map_err(|e| e.to_string())?;
    Ok(s.to_string())
}

impl ServeArgs {
    /// The core's configuration, and the tool surface the face serves.
    pub fn into_config(self) -> (Config, Surface) {
        let list = |s: &str| -> Vec<String> {
            s.split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(String::from)
                .collect()
        };
        let mut surface = Surface::default();
        if let Some(core) = &self.core_tools {
            if core.trim() == "all" {
                surface.all_direct = true;
            } else {
                surface.core_tools = Some(list(core));
            }
        }
        if let Some(disabled) = &self.disabled_tools {
            if disabled.trim().is_empty() {
                surface.all_direct = true;
            }
            surface.disabled_tools = list(disabled);
        }
        let config = Config {
            shell: self.shell.filter(|s| !s.is_empty()),
            cwd: self.cwd,
            cols: self.cols,
            rows: self.rows,
            scrollback: self.scrollback as usize,
            login: self.login,
            max_sessions: self.max_sessions as usize,
            idle_timeout: self.idle_timeout.unwrap_or(config::DEFAULT_IDLE_TIMEOUT),
            state_dir: self.state_dir.unwrap_or_else(config::default_state_dir),
            remote: termpilot_core::remote::RemoteOptions {
                ssh_config: self.ssh_config,
                ssh_options: self.ssh_options,
                remote_bin: self.remote_bin,
            },
            sandbox: sandbox::Settings {
                mode: self.sandbox,
                writable: self.writable,
                network: self.network,
                deny_read: self.deny_read,
            },
            max_spill_bytes: self.max_spill_bytes,
            session_ids: config::SessionIds::default(),
            evict_lru: self.evict_lru,
        };
        (config, surface)
    }
}

/// `90`, `90s`, `30m`, `6h` → a duration.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a duration; write seconds or e.g. 30m or 6h"))?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => return Err(format!("`{s}` has an unknown unit; use s, m or h")),
    };
    if secs == 0 {
        return Err("the idle timeout must be at least one second".into());
    }
    Ok(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("6h").unwrap(), Duration::from_secs(21600));
        assert!(parse_duration("6d").is_err());
        assert!(parse_duration("0").is_err());
    }

    #[test]
    fn empty_disabled_list_registers_everything_directly() {
        let cli = Cli::parse_from(["termpilot", "--disabled-tools", ""]);
        let (_, surface) = cli.serve.into_config();
        assert!(surface.all_direct);
        assert!(surface.disabled_tools.is_empty());
    }

    #[test]
    fn core_tools_list() {
        let cli = Cli::parse_from([
            "termpilot",
            "serve",
            "--core-tools",
            "terminal_list, terminal_exec",
        ]);
        let Some(Command::Serve(given)) = cli.command else {
            panic!("`serve` parses as the serve subcommand");
        };
        let (_, surface) = given.serve.into_config();
        assert_eq!(
            surface.core_tools,
            Some(vec![
                "terminal_list".to_string(),
                "terminal_exec".to_string()
            ])
        );
    }
}
