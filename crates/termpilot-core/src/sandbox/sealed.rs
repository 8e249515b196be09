//! The caller's environment, sealed on its way through the `__sandbox-exec` wrapper.
//!
//! The wrapper is an ordinary dynamically linked program: the dynamic loader and libc act on
//! its environment before `main` runs (`LD_PRELOAD`, `LD_AUDIT`, `LD_LIBRARY_PATH`,
//! `GCONV_PATH`, `LOCPATH`, `MALLOC_*`, `GLIBC_TUNABLES`, …), which would run code the caller
//! chose before the sandbox is applied. So no caller variable reaches the wrapper under its
//! own name: the whole environment the program should get travels encoded in
//! `TERMPILOT_SANDBOX_ENV` (a chunk count) and `TERMPILOT_SANDBOX_ENV_<i>` (base64 of
//! `KEY=VALUE\0…`, at most [`CHUNK`] characters each, under the kernel's limit for one
//! variable), and the wrapper exec's the confined program with exactly that environment.
//! A wrapper started without them refuses to run anything.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// The variable holding the number of chunks; chunk `i` is `{SEALED}_{i}`.
pub const SEALED: &str = "TERMPILOT_SANDBOX_ENV";

/// Characters of base64 per chunk (the kernel takes at most 128 KiB per variable).
const CHUNK: usize = 96 * 1024;

/// `env` as the wrapper's own environment: the sealed variables, nothing else.
pub fn encode(env: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
    let mut raw = Vec::new();
    for (k, v) in env {
        raw.extend_from_slice(k.as_bytes());
        raw.push(b'=');
        raw.extend_from_slice(v.as_bytes());
        raw.push(0);
    }
    let text = STANDARD.encode(&raw);
    let chunks: Vec<&[u8]> = if text.is_empty() {
        Vec::new()
    } else {
        text.as_bytes().chunks(CHUNK).collect()
    };
    let mut out = vec![(SEALED.into(), chunks.len().to_string().into())];
    for (i, c) in chunks.iter().enumerate() {
        out.push((
            format!("{SEALED}_{i}").into(),
            OsStr::from_bytes(c).to_os_string(),
        ));
    }
    out
}

/// The environment sealed by [`encode`], read back through `get` (the process's own
/// environment in the wrapper).
pub fn decode(get: impl Fn(&str) -> Option<OsString>) -> Result<Vec<(OsString, OsString)>, String> {
    let count: usize = get(SEALED)
        .and_then(|c| c.to_str().and_then(|c| c.parse().ok()))
        .ok_or("the wrapper was started without its sealed environment")?;
    let mut text = Vec::new();
    for i in 0..count {
        let chunk = get(&format!("{SEALED}_{i}"))
            .ok_or_else(|| format!("part {i} of the sealed environment is missing"))?;
        text.extend_from_slice(chunk.as_bytes());
    }
    let raw = STANDARD
        .decode(&text)
        .map_err(|e| format!("the sealed environment is damaged ({e})"))?;
    let mut env = Vec::new();
    for pair in raw.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        // A key never holds `=`; the value may.
        let at = pair
            .iter()
            .position(|b| *b == b'=')
            .ok_or("the sealed environment has an entry without `=`")?;
        env.push((
            OsString::from_vec(pair[..at].to_vec()),
            OsString::from_vec(pair[at + 1..].to_vec()),
        ));
    }
    Ok(env)
}

/// The environment a child of this process gets when `changes` are applied to it (`None`
/// removes a variable), in a stable order.
pub fn inherited_with<'a>(
    changes: impl Iterator<Item = (&'a OsStr, Option<&'a OsStr>)>,
) -> Vec<(OsString, OsString)> {
    let mut env: std::collections::BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    for (k, v) in changes {
        match v {
            Some(v) => env.insert(k.to_os_string(), v.to_os_string()),
            None => env.remove(k),
        };
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn round_trip(env: Vec<(OsString, OsString)>) {
        let sealed: HashMap<String, OsString> = encode(&env)
            .into_iter()
            .map(|(k, v)| (k.into_string().unwrap(), v))
            .collect();
        assert!(sealed.keys().all(|k| k.starts_with(SEALED)), "{sealed:?}");
        let back = decode(|k| sealed.get(k).cloned()).unwrap();
        assert_eq!(back, env);
    }

    #[test]
    fn environments_survive_the_seal() {
        round_trip(vec![]);
        round_trip(vec![
            ("LD_PRELOAD".into(), "/x/evil.so".into()),
            ("A".into(), "b=c=d".into()),
            ("EMPTY".into(), "".into()),
            (
                OsString::from_vec(b"K\xff".to_vec()),
                OsString::from_vec(b"v\xfe\n".to_vec()),
            ),
        ]);
        // Larger than one variable may be: split into chunks.
        round_trip(vec![("BIG".into(), "x".repeat(300 * 1024).into())]);
    }

    #[test]
    fn a_wrapper_without_its_seal_refuses() {
        let e = decode(|_| None).unwrap_err();
        assert!(e.contains("sealed environment"), "{e}");
        let e = decode(|k| (k == SEALED).then(|| "2".into())).unwrap_err();
        assert!(e.contains("missing"), "{e}");
    }
}
