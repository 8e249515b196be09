//! The core's errors: values that carry one sentence for the agent.
//!
//! Every message says what was wrong and what to do next. The MCP face turns them into tool
//! errors (`isError: true`) without rewording them, except a [`Fault`]: a failure whose next
//! step names a tool or a parameter, which the face words itself.

/// A failure the agent can act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter was missing, malformed or out of range.
    #[error("{0}")]
    InvalidInput(String),
    /// No session has this id or name (the face words it: it names the tools to list and
    /// start sessions).
    #[error("No session is called `{0}`.")]
    UnknownSession(String),
    /// The session had ended and was started afresh; the call's action was not performed.
    #[error("{0}")]
    Respawned(String),
    /// A limit was reached (sessions, sizes, counts).
    #[error("{0}")]
    Limit(String),
    /// The operating system refused something.
    #[error("{context}: {source}. {hint}")]
    Io {
        context: String,
        hint: String,
        #[source]
        source: std::io::Error,
    },
    /// Anything else, already phrased for the agent.
    #[error("{0}")]
    Other(String),
    /// A failure the face words for the agent (it names a tool or a parameter).
    #[error(transparent)]
    Fault(#[from] Fault),
}

impl Error {
    /// An I/O failure with what was being done and what the agent can try.
    pub fn io(context: impl Into<String>, hint: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            hint: hint.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure whose next step is another tool or a parameter, which only the face can name.
///
/// The core says what was wrong in its own words (this `Display`, for logs and callers that
/// are not agents); the MCP face matches the variant and writes the agent's sentence with the
/// tool and parameter names it uses (`mcp::wire::errors`). Variants that come from the
/// operating system keep their `io::Error` as the source.
#[derive(Debug, thiserror::Error)]
pub enum Fault {
    /// No job directory has this id.
    #[error("No job is called `{id}`.")]
    UnknownJob { id: String },
    /// The string cannot be a job id (a path, a space...).
    #[error("`{id}` is not a job id.")]
    NotAJobId { id: String },
    /// The lock is held by a live owner and the wait (if any) ran out.
    #[error("Lock `{name}` is held by {holder} for {held_for}.")]
    LockHeld {
        name: String,
        /// `pid N` and the holder's note.
        holder: String,
        held_for: String,
        /// How long the caller waited; `None` when it asked not to wait.
        waited_ms: Option<u64>,
    },
    /// A release with a token that is not the holder's.
    #[error("That token does not hold lock `{name}` (it is held by {holder}).")]
    WrongLockToken { name: String, holder: String },
    /// A window capture without a title to look for.
    #[error("A window capture needs a part of the window's title.")]
    WindowTitleMissing,
    /// A window capture with a blank title.
    #[error("The window title to look for is empty.")]
    WindowTitleEmpty,
    /// A screenshot path that is relative or not a `.png`.
    #[error("`{}` must be an absolute path ending in .png.", path.display())]
    ScreenshotPath { path: std::path::PathBuf },
    /// The screenshot's folder or file cannot be written.
    #[error("{context}: {source}.")]
    ScreenshotWrite {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// No desktop screenshot backend on this platform.
    #[error("Desktop screenshots are not supported on this platform yet (X11 only).")]
    DesktopScreenshotUnsupported,
    /// No way to list a file's holders on this platform.
    #[error("Listing who holds a file open is not supported on this platform yet.")]
    FileLockersUnsupported,
    /// An edit with nothing to replace.
    #[error("The text to replace is empty.")]
    EditEmptyText,
    /// An edit of a file that does not exist.
    #[error("`{}` does not exist; only existing files are edited.", path.display())]
    EditMissingFile { path: std::path::PathBuf },
    /// A file over the edit limit.
    #[error("`{}` is {mib} MiB, over the edit limit of {limit_mib} MiB; the file is unchanged.", path.display())]
    EditTooLarge {
        path: std::path::PathBuf,
        mib: u64,
        limit_mib: u64,
    },
    /// A file that grew over the edit limit while it was read.
    #[error("`{}` grew past the edit limit of {limit_mib} MiB while being read; the file is unchanged.", path.display())]
    EditGrew {
        path: std::path::PathBuf,
        limit_mib: u64,
    },
    /// A file that is not UTF-8 text.
    #[error("`{}` is not UTF-8 text, so it cannot be edited as text.", path.display())]
    EditNotText { path: std::path::PathBuf },
    /// The text to replace does not occur.
    #[error("The text to replace was not found in `{}` (0 matches); the file is unchanged.", path.display())]
    EditNoMatch { path: std::path::PathBuf },
    /// The text to replace occurs more than once and not every match was to be replaced.
    #[error("The text to replace matches {count} times in `{}`; the file is unchanged.", path.display())]
    EditManyMatches {
        path: std::path::PathBuf,
        count: usize,
    },
    /// A relative path with no directory to resolve it against.
    #[error("`{path}` is a relative path and there is no directory to resolve it against.")]
    RelativePath { path: String },
    /// A write whose folder is missing, with folder creation off.
    #[error("The directory `{}` does not exist.", dir.display())]
    MissingDirectory { dir: std::path::PathBuf },
    /// A replace of a file with other hard links, not allowed to break them.
    #[error("`{}` has {links} hard links; replacing it would leave the other names with the old contents.", path.display())]
    HardLinks {
        path: std::path::PathBuf,
        links: u64,
    },
    /// The program to run was not found.
    #[error("`{program}` was not found.")]
    ProgramNotFound {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// A click on a screen whose program does not report the mouse.
    #[error(
        "The program on screen has not enabled mouse reporting, so a click would only type escape codes."
    )]
    NoMouse,
    /// A wheel turn where nothing scrolls with the wheel.
    #[error(
        "Nothing on this screen scrolls with the wheel: no program reports the mouse or uses the alternate screen."
    )]
    NothingScrolls,
    /// Typing refused while a person holds the session's keyboard.
    #[error("A person is typing in session {id}, so the input was not sent.")]
    PersonTyping { id: String, lease_secs: u64 },
    /// A prompt command in a session that runs one program, not a shell.
    #[error("Session {id} runs one program, not a shell.")]
    NotAShell { id: String },
    /// A prompt command while a program holds the terminal.
    #[error("`{program}` is running in session {id}, so there is no prompt to type a command at.")]
    ProgramInForeground { id: String, program: String },
    /// A prompt command while the last one still runs.
    #[error("A command is still running in session {id}.")]
    CommandStillRunning { id: String },
    /// A command line over the limit.
    #[error("The command is {bytes} bytes, over the {limit_kib} KiB a command line may take.")]
    CommandTooLong { bytes: usize, limit_kib: usize },
    /// Input for a program that has exited.
    #[error("The program in session {id} has exited ({how}).")]
    ProgramExited { id: String, how: String },
    /// The program stopped reading its input (the terminal's input buffer is full).
    #[error("The program has not read its input for 5 s (the terminal's input buffer is full).")]
    InputNotRead,
    /// A start at the session limit.
    #[error("{open} sessions are open, the most this server allows.")]
    SessionLimit { open: usize },
    /// A call on a command session whose program ended: it is not run again, its id is free.
    #[error(
        "Session {id} ran `{command}` and {closed}; it was not restarted (a command session's program is not run again on its own), and its id is now released."
    )]
    CommandSessionReleased {
        id: String,
        command: String,
        /// How it ended: `was closed (…)`, `was closed after sitting idle for more than …`.
        closed: String,
    },
    /// A sandboxed job refused: the binary it starts through is writable from the sandbox.
    #[error(
        "Jobs cannot start sandboxed while the termpilot binary `{}` lies where sandboxed processes can write (a job outlives the server and starts through that file); ask the person running termpilot to install it outside the write roots.",
        binary.display()
    )]
    JobBinaryWritable { binary: std::path::PathBuf },
}
