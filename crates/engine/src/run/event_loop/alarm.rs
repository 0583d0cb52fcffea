//! A wake-up with microsecond precision for fixed-rate arrivals and a script's `\sleep`.
//!
//! `epoll_wait` takes its timeout in whole milliseconds (mio rounds up, and the kernel adds the
//! thread's timer slack), so a loop that sleeps until the next arrival wakes up to a millisecond
//! late, and intended-start latency would charge that to the server. A timerfd registered with
//! the poller fires at the due time instead (an hrtimer armed without slack), and the loop
//! wakes then. Measured on a 2-core VM (bench/RESULTS.md): the loop's median lateness fell
//! from 0.53 ms to 0.04 ms, and `--rate 200`'s p50 from 0.8 ms to about 0.2 ms.
//!
//! The timer is created the first time a loop waits for a due time, so a loop that never paces
//! makes no extra syscall; a paced loop makes one `timerfd_settime` per new due time. Its
//! expiry is never read: re-arming resets it, and the poller is edge-triggered.

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

/// The poller token of a loop's alarm (session tokens are their indices).
pub(super) const ALARM: Token = Token(usize::MAX);

/// A loop's timerfd and the time it is armed for.
pub(super) struct Alarm {
    fd: OwnedFd,
    armed: Option<Instant>,
}

impl Alarm {
    /// A disarmed timer registered with `registry` under [`ALARM`].
    pub fn new(registry: &Registry) -> io::Result<Self> {
        // SAFETY: timerfd_create takes no pointers; a non-negative result is a new descriptor
        // that nothing else owns.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor owned by nobody else (checked above).
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        registry.register(&mut SourceFd(&fd.as_raw_fd()), ALARM, Interest::READABLE)?;
        Ok(Alarm { fd, armed: None })
    }

    /// Makes the timer fire at `at` (nothing when it is armed for `at` already, or `at` has
    /// come: the loop's wait is zero then).
    pub fn set(&mut self, at: Instant) {
        if self.armed == Some(at) {
            return;
        }
        // Instant is CLOCK_MONOTONIC but opaque, so arm relative to now: the clock read and
        // the syscall are nanoseconds apart.
        let d = at.saturating_duration_since(Instant::now());
        if d.is_zero() {
            return;
        }
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: `fd` is a timerfd we own; `spec` outlives the call; no old value is asked.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        // A refused arm leaves the millisecond timeout of `epoll_wait` as the fallback.
        self.armed = (rc == 0).then_some(at);
    }
}
