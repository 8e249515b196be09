//! One command on many targets: bounded concurrency, results in the order asked, and
//! identical outputs grouped so fifty equal answers cost one.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{OneShot, Ran, RemoteOptions, Target};
use crate::error::{Error, Result};

/// Most targets one fleet call may name.
pub const MAX_TARGETS: usize = 100;
/// Targets run at once when the call names no concurrency.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// Runs `job` on every target, at most `concurrency` at a time, each with the job's own
/// timeout; one result per target, in the order of `targets`. A slow or dead target holds
/// only its own slot.
pub async fn run(
    targets: &[Target],
    options: &RemoteOptions,
    job: &OneShot,
    concurrency: usize,
    cancel: &CancellationToken,
) -> Vec<Result<Ran>> {
    let slots = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut tasks = JoinSet::new();
    for (index, target) in targets.iter().cloned().enumerate() {
        let (slots, options, job, cancel) =
            (slots.clone(), options.clone(), job.clone(), cancel.clone());
        tasks.spawn(async move {
            let _slot = slots.acquire_owned().await;
            (index, super::run(&target, &options, &job, &cancel).await)
        });
    }
    let mut results: Vec<Option<Result<Ran>>> = targets.iter().map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        if let Ok((index, result)) = joined {
            results[index] = Some(result);
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Other("The run on this target panicked.".into()))))
        .collect()
}

/// Indices of equal keys, grouped in the order each key first appears.
pub fn group<K: Eq + Hash + Clone>(keys: &[K]) -> Vec<(K, Vec<usize>)> {
    let mut groups: Vec<(K, Vec<usize>)> = Vec::new();
    let mut seen: HashMap<K, usize> = HashMap::new();
    for (i, key) in keys.iter().enumerate() {
        match seen.get(key) {
            Some(&g) => groups[g].1.push(i),
            None => {
                seen.insert(key.clone(), groups.len());
                groups.push((key.clone(), vec![i]));
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_keep_first_appearance_order() {
        let g = group(&["a", "b", "a", "c", "b"]);
        assert_eq!(
            g,
            vec![("a", vec![0, 2]), ("b", vec![1, 4]), ("c", vec![3])]
        );
    }
}
