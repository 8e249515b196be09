//! Network off: a seccomp filter that lets a process create Unix sockets only.
//!
//! `socket(2)` and `socketpair(2)` with any family but `AF_UNIX` fail with `EACCES` (TCP,
//! UDP, raw, netlink, vsock — every address, loopback included), and io_uring is refused
//! (`EPERM`) because its operations create and connect sockets without those syscalls.
//! A syscall from another architecture (x32, i386 on x86_64) kills the process: it could
//! name `socket` by another number. The filter is inherited by every descendant and cannot
//! be removed.

use std::io;

const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
const SECCOMP_GET_ACTION_AVAIL: libc::c_uint = 2;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// Offsets in `struct seccomp_data`: nr, arch, then the arguments from byte 16 (the low
/// 32 bits of `args[0]` on a little-endian machine).
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
const OFFSET_ARG0_LOW: u32 = 16;

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
#[cfg(target_arch = "x86_64")]
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;

fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

fn load(offset: u32) -> libc::sock_filter {
    op(BPF_LD_W_ABS, 0, 0, offset)
}

fn ret(value: u32) -> libc::sock_filter {
    op(BPF_RET_K, 0, 0, value)
}

/// The filter program.
pub(super) fn program() -> Vec<libc::sock_filter> {
    let mut f = vec![
        load(OFFSET_ARCH),
        op(BPF_JEQ_K, 1, 0, AUDIT_ARCH),
        ret(SECCOMP_RET_KILL_PROCESS),
        load(OFFSET_NR),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        const X32_SYSCALL_BIT: u32 = 0x4000_0000;
        f.push(op(BPF_JSET_K, 0, 1, X32_SYSCALL_BIT));
        f.push(ret(SECCOMP_RET_KILL_PROCESS));
    }
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        f.push(op(BPF_JEQ_K, 0, 1, nr as u32));
        f.push(ret(SECCOMP_RET_ERRNO | libc::EPERM as u32));
    }
    for nr in [libc::SYS_socket, libc::SYS_socketpair] {
        // nr matches: look at the family; else skip the four instructions below.
        f.push(op(BPF_JEQ_K, 0, 4, nr as u32));
        f.push(load(OFFSET_ARG0_LOW));
        f.push(op(BPF_JEQ_K, 0, 1, libc::AF_UNIX as u32));
        f.push(ret(SECCOMP_RET_ALLOW));
        f.push(ret(SECCOMP_RET_ERRNO | libc::EACCES as u32));
    }
    f.push(ret(SECCOMP_RET_ALLOW));
    f
}

/// Installs the filter on the calling thread (and so on everything it execs or forks).
/// `no_new_privs` must already be set.
pub(super) fn install() -> io::Result<()> {
    let mut filter = program();
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_mut_ptr(),
    };
    // SAFETY: `prog` points at `filter`, which outlives the call; the kernel copies it.
    let r = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &prog as *const libc::sock_fprog,
            0,
            0,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// True when this kernel can install seccomp filters that return an errno.
pub(super) fn available() -> bool {
    let action: u32 = SECCOMP_RET_ERRNO;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL only reads the u32 it is given.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    r == 0
}
