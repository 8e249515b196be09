//! The C maths functions the server's code calls, defined here from the pure-Rust `libm`
//! crate, so that the process never loads the system's libm.
//!
//! Why: only three are called (tokio's scheduler takes a `pow` per batch of tasks, the
//! screenshot renderer a `hypotf` and a `sinf`), yet loading libm maps and relocates a whole
//! library and its functions' resolvers: about half a MiB of resident pages for an idle server
//! (SPEC's idle budget is 6 MiB). With every one of them defined in the binary the linker
//! needs nothing from libm and leaves it out (`--as-needed`). A new call into libm brings it
//! back; `tests/binary.rs` says so.
//!
//! The functions are musl's, as ported by the `libm` crate: within an ulp of glibc's, which is
//! all a scheduler's average and a pixel's coverage need.

/// `pow(3)`.
#[unsafe(no_mangle)]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

/// `hypotf(3)`.
#[unsafe(no_mangle)]
pub extern "C" fn hypotf(x: f32, y: f32) -> f32 {
    libm::hypotf(x, y)
}

/// `sinf(3)`.
#[unsafe(no_mangle)]
pub extern "C" fn sinf(x: f32) -> f32 {
    libm::sinf(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_functions_give_the_values_libm_gives() {
        assert_eq!(pow(2.0, 10.0), 1024.0);
        assert_eq!(pow(0.8, 0.5), 0.8f64.sqrt());
        assert_eq!(hypotf(3.0, 4.0), 5.0);
        assert!((sinf(0.5) - 0.479_425_55).abs() < 1e-7);
        assert_eq!(sinf(0.0), 0.0);
    }
}
