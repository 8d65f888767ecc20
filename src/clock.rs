//! The monotonic clock behind every deadline and timing.
//!
//! On every native target this is `std::time::Instant` itself. On `wasm32-unknown-unknown`
//! (the web playground) `std::time::Instant::now()` panics, so the crate uses this module's
//! `Instant` instead: milliseconds read from a clock the host installs with [`set_source`]
//! (the page passes `performance.now()`). Until a source is installed the clock stands still,
//! so deadlines never expire there and timings read zero; nothing panics.

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use std::time::Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub use self::host::{set_source, Instant};

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod host {
    use std::ops::{Add, Sub};
    use std::sync::OnceLock;
    use std::time::Duration;

    /// The host's clock, in milliseconds from an arbitrary origin.
    static SOURCE: OnceLock<fn() -> f64> = OnceLock::new();

    /// Install the host's clock (milliseconds, monotonic); the first call wins.
    pub fn set_source(now_ms: fn() -> f64) {
        let _ = SOURCE.set(now_ms);
    }

    /// A point in time, in milliseconds of the host's clock.
    #[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
    pub struct Instant(f64);

    impl Instant {
        pub fn now() -> Instant {
            Instant(SOURCE.get().map_or(0.0, |f| f()))
        }

        pub fn duration_since(&self, earlier: Instant) -> Duration {
            Duration::from_secs_f64(((self.0 - earlier.0) / 1000.0).max(0.0))
        }

        pub fn elapsed(&self) -> Duration {
            Instant::now().duration_since(*self)
        }
    }

    impl Add<Duration> for Instant {
        type Output = Instant;
        fn add(self, d: Duration) -> Instant {
            Instant(self.0 + d.as_secs_f64() * 1000.0)
        }
    }

    impl Sub<Instant> for Instant {
        type Output = Duration;
        fn sub(self, earlier: Instant) -> Duration {
            self.duration_since(earlier)
        }
    }
}
