//! `termpilot://jobs/{id}/log`: the combined log of every job on disk (its last
//! [`MAX_LOG`] bytes, the way a tail would show it).

use std::io::{Read, Seek, SeekFrom};

use rmcp::model::{Resource, ResourceContents};
use termpilot_core::Core;

use super::Provider;

const PREFIX: &str = "termpilot://jobs/";
/// The most bytes of a log served by one read (its end).
pub const MAX_LOG: u64 = 1 << 20;

pub struct JobLogs;

impl Provider for JobLogs {
    fn list(&self, core: &Core) -> Vec<Resource> {
        core.jobs
            .list()
            .jobs
            .into_iter()
            .map(|j| {
                let label = j.name.clone().unwrap_or_else(|| j.job_id.clone());
                Resource::new(format!("{PREFIX}{}/log", j.job_id), format!("{label} log"))
                    .with_description(format!("Output of job {}: {}", j.job_id, j.command))
                    .with_mime_type("text/plain")
            })
            .collect()
    }

    fn read(&self, core: &Core, uri: &str) -> Option<Result<Vec<ResourceContents>, String>> {
        let id = uri.strip_prefix(PREFIX)?.strip_suffix("/log")?;
        Some(
            core.jobs
                .status(id, 0)
                .map_err(|e| e.to_string())
                .and_then(|status| {
                    tail(&status.log_paths.combined).map_err(|e| {
                        format!("The log of job {id} could not be read ({e}); call job_status.")
                    })
                })
                .map(|text| vec![ResourceContents::text(text, uri)]),
        )
    }
}

/// The last [`MAX_LOG`] bytes of a file, as text (invalid UTF-8 replaced).
fn tail(path: &str) -> std::io::Result<String> {
    let mut file = termpilot_core::sandbox::open_read(std::path::Path::new(path))?;
    let len = file.metadata()?.len();
    if len > MAX_LOG {
        file.seek(SeekFrom::Start(len - MAX_LOG))?;
    }
    let mut bytes = Vec::new();
    file.take(MAX_LOG).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
