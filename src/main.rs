//! termpilot's binary: the command line and the MCP face over the core library.

mod attach_client;
mod cli;
mod keep;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod maths;
mod mcp;
mod skills;
mod web;

use std::sync::Arc;

use termpilot_core::Core;

use crate::cli::{Cli, Command};

fn main() -> std::process::ExitCode {
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    if let Some(code) = termpilot_core::sandbox::wrapper_from_argv() {
        return std::process::ExitCode::from(code);
    }
    // Before any thread starts: a malloc arena per core (at least two), not eight per core
    // for every thread that ever allocated (each keeps freed pages of its own; the PTY
    // threads of a few sessions cost about half a MiB of peak memory that way).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // sysconf, not std's available_parallelism: that one parses the cgroup files, code
        // that costs a megabyte of the binary's pages mapped at start.
        // SAFETY: sysconf and mallopt take no pointers; no other thread runs yet.
        unsafe {
            let cores = libc::sysconf(libc::_SC_NPROCESSORS_ONLN).clamp(2, 64);
            libc::mallopt(libc::M_ARENA_MAX, cores as libc::c_int);
            // A fixed threshold: buffers of 128 KiB and more (an emulator's kept plain
            // text, a large reply) are mapped on their own and given back when freed. By
            // default glibc raises the threshold to the largest such buffer freed, after
            // which they come from the heap and stay resident.
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        }
    }
    // Before any thread starts: the token leaves the environment (no child inherits it),
    // and the descriptor limit is raised (connections are bounded within it).
    let env_token = take_env_token();
    mcp::http_serve::raise_nofile_limit();
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli =
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    init_logging();
    match cli.command {
        Some(Command::SkillsDir) => match if cli.serve.compat.as_deref() == Some("terminal-use") {
            skills::install_terminal_use()
        } else {
            skills::install()
        } {
            Ok(dir) => {
                println!("{}", dir.display());
                let skill = dir.join("termpilot");
                eprintln!(
                    "termpilot: the Agent Skill is {}; copy its folder into your client's skills folder, e.g. cp -r {} ~/.claude/skills/",
                    skill.join("SKILL.md").display(),
                    skill.display()
                );
                std::process::ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("termpilot: {e}");
                std::process::ExitCode::FAILURE
            }
        },
        Some(Command::Token { port }) => match web::token::find(port) {
            Ok(found) => {
                println!("{}", found.token);
                if found.listening {
                    eprintln!(
                        "termpilot: the token of the server on port {}, from {}; its page: http://127.0.0.1:{}/#token={}",
                        found.port,
                        found.path.display(),
                        found.port,
                        found.token
                    );
                } else {
                    eprintln!(
                        "termpilot: warning: nothing answers on port {} on loopback: {} may be left from a server that was killed",
                        found.port,
                        found.path.display()
                    );
                }
                std::process::ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("termpilot: {e:#}");
                std::process::ExitCode::FAILURE
            }
        },
        Some(Command::Attach { id, socket, resize }) => {
            match attach_client::run(attach_client::Request { id, socket, resize }) {
                Ok(()) => std::process::ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("termpilot: {e}");
                    std::process::ExitCode::FAILURE
                }
            }
        }
        Some(Command::Sessions { socket }) => match keep::sessions_cmd::run(socket) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("termpilot: {e}");
                std::process::ExitCode::FAILURE
            }
        },
        Some(Command::SessionHost(args)) => match keep::host::run(args) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("termpilot: session host: {e}");
                std::process::ExitCode::FAILURE
            }
        },
        command @ (Some(Command::Serve(_)) | None) => {
            let (serve_args, http) = match command {
                Some(Command::Serve(given)) => {
                    if let Some(flag) = cli::given_on_command_line(&matches) {
                        eprintln!(
                            "termpilot: --{flag} was given before `serve`; put the serving options after `serve`, or leave `serve` out."
                        );
                        return std::process::ExitCode::from(2);
                    }
                    (given.serve, given.http)
                }
                _ => (cli.serve, cli.http),
            };
            if http.token.is_some() {
                eprintln!("termpilot: {}.", web::token::refuse_on_command_line());
                return std::process::ExitCode::from(2);
            }
            let token = match given_token(env_token, http.token_file.as_deref()) {
                Ok(token) => token,
                Err(e) => {
                    eprintln!("termpilot: {e:#}.");
                    return std::process::ExitCode::from(2);
                }
            };
            let compat = serve_args.compat.clone();
            mcp::secrets::configure(serve_args.ask_person.as_deref(), compat.is_some());
            let (keep_all, keep_idle) = (serve_args.keep_sessions, serve_args.keep_idle);
            let (config, surface) = serve_args.into_config();
            // Presets keep their seed's lifecycle: nothing of theirs is kept.
            if keep_all && compat.is_some() {
                eprintln!(
                    "termpilot: --keep-sessions is ignored with --compat: a preset's sessions end with its server, as its seed's do."
                );
            }
            keep::configure(keep::Settings {
                keep_all: keep_all && compat.is_none(),
                keep_idle,
                is_host: false,
                policy: keep::policy_args(&config),
            });
            // A shell that is not there is refused now, not replaced by the default later.
            if let Some(shell) = config.shell.as_deref()
                && let Err(e) = termpilot_core::session::resolve_shell(Some(shell), None)
            {
                eprintln!("termpilot: --shell / TERMPILOT_SHELL: {e}");
                return std::process::ExitCode::from(2);
            }
            let explicit = cli::explicit(&matches);
            match serve(config, surface, compat.as_deref(), explicit, http, token) {
                Ok(()) => std::process::ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("termpilot: {e:#}");
                    std::process::ExitCode::FAILURE
                }
            }
        }
    }
}

/// Takes `TERMPILOT_TOKEN` out of this process's environment, so no child (session,
/// one-shot run, job) inherits it; its value, when set and not empty.
fn take_env_token() -> Option<String> {
    let value = std::env::var_os(web::token::ENV);
    if value.is_some() {
        // SAFETY: called first thing in `main`, before any other thread exists.
        unsafe { std::env::remove_var(web::token::ENV) };
    }
    value
        .map(|v| v.to_string_lossy().trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The token given in `TERMPILOT_TOKEN` or `--token-file` (not both), checked; any other
/// environment variable holding it is removed, so no child inherits it either.
fn given_token(
    env_token: Option<String>,
    file: Option<&std::path::Path>,
) -> anyhow::Result<Option<String>> {
    let token = match (env_token, file) {
        (Some(_), Some(_)) => anyhow::bail!(
            "both {} and --token-file give a token; keep one",
            web::token::ENV
        ),
        (Some(token), None) => {
            web::token::check_given(&token)
                .map_err(|e| anyhow::anyhow!("{}: {e}", web::token::ENV))?;
            token
        }
        (None, Some(path)) => web::token::read_file(path)?,
        (None, None) => return Ok(None),
    };
    let holding: Vec<std::ffi::OsString> = std::env::vars_os()
        .filter(|(_, v)| v.to_string_lossy().contains(token.as_str()))
        .map(|(k, _)| k)
        .collect();
    for name in holding {
        // SAFETY: still single-threaded: `main` has started no thread yet.
        unsafe { std::env::remove_var(name) };
    }
    Ok(Some(token))
}

/// Logs go to stderr only: stdout belongs to the protocol.
fn init_logging() {
    // Bodies (arguments, results) stay out unless `termpilot::wire` is named: see mcp::logging.
    let spec = std::env::var("TERMPILOT_LOG").ok();
    let filter = tracing_subscriber::EnvFilter::try_new(mcp::logging::filter(spec.as_deref()))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(mcp::logging::filter(None)));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(mcp::logging::Redacting)
        .with_ansi(false)
        .init();
}

fn serve(
    mut config: termpilot_core::Config,
    mut surface: mcp::registry::Surface,
    compat: Option<&str>,
    explicit: mcp::compat::Explicit,
    http: cli::HttpArgs,
    token: Option<String>,
) -> anyhow::Result<()> {
    if http.http.is_some() && http.web.is_some() {
        anyhow::bail!("--http already serves the web page at /; drop --web");
    }
    let preset = compat
        .map(mcp::compat::Preset::from_name)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let tools = match preset {
        Some(preset) => {
            preset
                .configure(&mut config, &mut surface, explicit)
                .map_err(anyhow::Error::msg)?;
            preset.tools(mcp::tools::all())
        }
        None => mcp::tools::all(),
    };
    termpilot_core::sandbox::install(&config.sandbox, config.cwd.as_deref())
        .map_err(anyhow::Error::msg)?;
    let registry = mcp::registry::Registry::build(tools, &surface, mcp::tools::extra::declaration)
        .map_err(anyhow::Error::msg)?;
    // Before the runtime starts a thread: what the server starts must end with it, however
    // it dies (`termpilot_core::host::start_undertaker`).
    termpilot_core::host::start_undertaker();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(async move {
        let core = Core::new(config);
        let mut server = mcp::server::Server::new(core.clone(), Arc::new(registry));
        if let Some(preset) = preset {
            server = server.with_identity(preset.identity());
        }
        let options = |addr: String, page_only: bool| mcp::http::Options {
            addr,
            allow_remote: http.http_allow_remote,
            token: token.clone(),
            page_only,
        };
        if let Some(addr) = http.http.clone() {
            let running =
                mcp::http::start(options(addr, false), core.clone(), Some(server)).await?;
            let signal = shutdown_signal(false).await;
            tracing::info!("ending on {signal}");
            running.stop().await;
            mcp::secrets::stop().await;
            mcp::remote::links::links().shutdown().await;
            core.shutdown().await;
            return Ok(());
        }
        // The page is an extra: nothing about it (a taken port, an unwritable token file)
        // may cost the MCP server on stdio. A bad address is refused at start.
        let page = match http.web.clone() {
            Some(addr) => {
                let options = options(addr, true);
                mcp::http::check(&options)?;
                match mcp::http::start(options, core.clone(), None).await {
                    Ok(page) => Some(page),
                    Err(e) => {
                        eprintln!(
                            "termpilot: the web page is not served: {e:#}; MCP on stdin/stdout goes on"
                        );
                        None
                    }
                }
            }
            None => None,
        };
        tokio::select! {
            result = mcp::stdio::serve(server) => result?,
            signal = shutdown_signal(true) => tracing::info!("ending on {signal}"),
        }
        if let Some(page) = page {
            page.stop().await;
        }
        mcp::secrets::stop().await;
        mcp::remote::links::links().shutdown().await;
        core.shutdown().await;
        Ok(())
    });
    // The stdin reader is a blocking thread that returns only when stdin has data or closes:
    // after a signal, leave it behind instead of waiting for the client.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    outcome
}

/// Started in a terminal, says on stderr what this is (once the signals are handled). Over
/// HTTP the listener's own lines already say what is served where.
fn tell_a_person(stdio: bool) {
    if stdio && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!("{TTY_NOTICE}");
    }
}

/// Said on stderr when a person starts the server in a terminal.
const TTY_NOTICE: &str = "termpilot speaks the Model Context Protocol on stdin/stdout, for an MCP client to run: \
register it with e.g. `claude mcp add termpilot -- termpilot` (README: other clients); Ctrl+C ends it.";

/// Resolves when the process is asked to stop; `stdio` when MCP is on stdin/stdout.
async fn shutdown_signal(stdio: bool) -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hup), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
            signal(SignalKind::interrupt()),
        ) else {
            return std::future::pending().await;
        };
        tell_a_person(stdio);
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = hup.recv() => "SIGHUP",
            _ = int.recv() => "SIGINT",
        }
    }
    #[cfg(not(unix))]
    {
        let ctrl_c = tokio::signal::ctrl_c();
        tell_a_person(stdio);
        let _ = ctrl_c.await;
        "Ctrl+C"
    }
}
