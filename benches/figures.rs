//! `cargo bench`: the figures of SPEC §6, measured on the release binary and printed as a
//! table. Each section lives in its own module and returns rows; add a section for a new
//! figure rather than timing anything in the tests.

mod client;
mod exec;
mod ingest;
mod memory;
mod screenshot;
mod soak;
mod startup;

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
        ("memory", memory::run),
        ("exec", exec::run),
        ("soak", soak::run),
    ];
    let mut rows = Vec::new();
    for (name, run) in sections {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        eprintln!("bench: {name}…");
        rows.extend(run());
    }
    print_table(&rows);
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
