//! Python one-shots for `run_python`: the interpreter found once, code fed through stdin.
//!
//! The interpreter is `python3` then `python` (`py` then `python` on Windows); the first one
//! that runs is cached for the life of the server, as its absolute `sys.executable`. The code
//! is read by `python -` from stdin, so its size has no argv limit, and `args` become
//! `sys.argv[1:]`. Output is unbuffered so a timeout still shows what was printed.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use super::capture::OutputCap;
use super::runner::{DEFAULT_PREVIEW_BYTES, Outcome, Spec, run};
use crate::error::{Error, Result};
use crate::host::Spills;

/// Interpreters tried, in order.
pub(crate) const CANDIDATES: &[&str] = if cfg!(windows) {
    &["py", "python"]
} else {
    &["python3", "python"]
};

/// How long finding the interpreter may take per candidate.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

static INTERPRETER: OnceCell<String> = OnceCell::const_new();

/// The cached interpreter, found on first use. A failed search is not cached.
pub(crate) async fn interpreter(spills: &Arc<Spills>) -> Result<String> {
    INTERPRETER.get_or_try_init(|| find(spills)).await.cloned()
}

async fn find(spills: &Arc<Spills>) -> Result<String> {
    for candidate in CANDIDATES {
        let mut spec = Spec::direct(
            *candidate,
            vec!["-c".into(), "import sys; print(sys.executable)".into()],
        );
        spec.timeout = PROBE_TIMEOUT;
        if let Ok(out) = run(spec, spills, &CancellationToken::new()).await
            && out.exit_code == Some(0)
        {
            let exe = out.stdout.text().trim().to_string();
            return Ok(if exe.is_empty() {
                candidate.to_string()
            } else {
                exe
            });
        }
    }
    Err(Error::Other(format!(
        "No Python interpreter was found (tried {} on PATH); install Python 3 or put it on PATH.",
        CANDIDATES.join(", ")
    )))
}

/// Runs `code` with `args` as `sys.argv[1:]`; long output goes to spill files of `spills`.
pub async fn run_code(
    code: &str,
    args: &[String],
    cwd: Option<PathBuf>,
    timeout: Duration,
    spills: &Arc<Spills>,
    cancel: &CancellationToken,
) -> Result<(Outcome, String)> {
    let python = interpreter(spills).await?;
    let mut argv = vec!["-".to_string()];
    argv.extend(args.iter().cloned());
    let mut spec = Spec::direct(python.clone(), argv);
    spec.cwd = cwd;
    spec.stdin = Some(code.as_bytes().to_vec());
    spec.timeout = timeout;
    spec.cap = OutputCap::Each(DEFAULT_PREVIEW_BYTES);
    spec.env = vec![
        ("PYTHONUNBUFFERED".into(), "1".into()),
        ("PYTHONIOENCODING".into(), "utf-8".into()),
    ];
    Ok((run(spec, spills, cancel).await?, python))
}
