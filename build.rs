//! Build script: gives the linker the order in which to lay out the functions the server runs
//! at start, at rest and in a typical exchange (`assets/link-order.txt`, made by
//! `scripts/link-order`), so they share a few pages of the binary instead of touching pages
//! all over it: the kernel maps a binary's pages around every one touched, so scattered code
//! is resident code.
//!
//! Only release builds for x86_64 Linux (GNU), whose default linker is lld, which reads the
//! file. Names the file has and the binary lacks are skipped, so a stale file costs pages,
//! never a build. It also packs the relative relocations where glibc can read them.
//! `TERMPILOT_LINK_ORDER=0` leaves both out (another linker).

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=assets/link-order.txt");
    println!("cargo:rerun-if-env-changed=TERMPILOT_LINK_ORDER");
    let env = |key: &str| std::env::var(key).unwrap_or_default();
    let wanted = env("PROFILE") == "release"
        && env("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && env("CARGO_CFG_TARGET_OS") == "linux"
        && env("CARGO_CFG_TARGET_ENV") == "gnu"
        && env("TERMPILOT_LINK_ORDER") != "0";
    if !wanted {
        return;
    }
    let order = Path::new(&env("CARGO_MANIFEST_DIR")).join("assets/link-order.txt");
    if order.is_file() {
        println!(
            "cargo:rustc-link-arg-bin=termpilot=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bin=termpilot=-Wl,--no-warn-symbol-ordering");
    }
    // Relative relocations packed (DT_RELR): the loader reads a few KiB at start instead of
    // the half MiB of `.rela.dyn`. The binary then needs glibc 2.36, so only where the
    // machine that builds it (and runs it: a native build) has that.
    if env("HOST") == env("TARGET") && glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bin=termpilot=-Wl,-z,pack-relative-relocs");
    }
}

/// True when this machine's glibc (`getconf GNU_LIBC_VERSION`: "glibc 2.36") is at least
/// `major.minor`.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}
