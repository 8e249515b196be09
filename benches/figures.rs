//! `cargo bench`: the figures of SPEC §6, measured on the release binary and printed as a
//! table. Each section lives in its own module and returns rows; add a section for a new
//! figure rather than timing anything in the tests.

mod client;
mod exec;
mod flat_out;
mod http_clients;
mod ingest;
mod interactive;
mod kept;
mod memory;
mod pipeline;
/// The tests' process helpers, which the harness files borrowed from tests/common use.
#[path = "../tests/common/procs.rs"]
#[allow(dead_code)]
mod procs;
mod remote;
mod sandbox;
mod screenshot;
mod soak;
mod startup;
mod web;

/// A section of the benchmark: runs and returns its rows.
type Section = fn() -> Vec<Row>;

/// One line of the table.
pub struct Row {
    pub figure: String,
    pub value: String,
    pub target: &'static str,
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument runs only matching sections.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let sections: Vec<(&str, Section)> = vec![
        ("startup", startup::run),
        ("screenshot", screenshot::run),
        ("ingest", ingest::run),
        ("pipeline", pipeline::run),
        ("memory", memory::run),
        ("exec", exec::run),
        ("interactive", interactive::run),
        ("soak", soak::run),
        ("soak-flat-out", flat_out::run),
        ("soak-http", http_clients::run),
        ("remote", remote::run),
        ("kept", kept::run),
        ("sandbox", sandbox::run),
        ("web", web::run),
    ];
    let mut rows = Vec::new();
    for (name, run) in sections {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        eprintln!("bench: {name}…");
        // A section that fails (a tool missing or erroring) costs its own rows, not the table.
        match std::panic::catch_unwind(run) {
            Ok(section) => rows.extend(section),
            Err(panic) => rows.push(Row {
                figure: format!("{name}: failed ({})", panic_message(&panic)),
                value: "–".into(),
                target: "",
            }),
        }
    }
    print_table(&rows);
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "see the message above".into())
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(160)
        .collect()
}

fn print_table(rows: &[Row]) {
    let w0 = rows
        .iter()
        .map(|r| r.figure.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let w1 = rows.iter().map(|r| r.value.len()).max().unwrap_or(5).max(5);
    println!("| {:w0$} | {:>w1$} | target", "figure", "value");
    println!("|-{}-|-{}-|-------", "-".repeat(w0), "-".repeat(w1));
    for r in rows {
        println!("| {:w0$} | {:>w1$} | {}", r.figure, r.value, r.target);
    }
}
