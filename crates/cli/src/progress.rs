//! Progress with an ETA, for every command that runs longer than a few seconds: one estimator
//! ([`eta_s`], the pace so far carried to the end), one way of writing a duration
//! ([`duration_text`]), and one way of showing a line on stderr ([`Line`]): rewritten in place
//! on a terminal, or a plain line every few seconds in a log. `prepare`'s loading line, `lab
//! run`'s cells, `tune`'s trials, `replay`'s statements, `io`'s seconds, `diff`'s classes and
//! `digest`'s bytes all take their ETA from it.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Seconds left until `total` units are done, `done` of them after `elapsed`, at the pace so
/// far; `None` before the first unit (no pace yet).
pub fn eta_s(done: f64, total: f64, elapsed: Duration) -> Option<f64> {
    (done > 0.0).then(|| (total - done).max(0.0) * elapsed.as_secs_f64() / done)
}

/// `16s`, `2m05s`, `1h02m`: the one duration printer, [`qpslab_core::units::duration_text`].
pub use qpslab_core::units::duration_text;

/// `, ETA 2m05s`, or `, ETA ?` while there is no pace to go by.
pub fn eta_text(done: f64, total: f64, elapsed: Duration) -> String {
    let eta = eta_s(done, total, elapsed).map_or("?".to_string(), duration_text);
    format!(", ETA {eta}")
}

/// A progress line on stderr: on a terminal it rewrites itself (at most twice a second), in a
/// log one plain line every few seconds. Commands that print their own lines on stdout meanwhile
/// use [`Line::plain`], which never rewrites.
pub struct Line {
    last: Option<Instant>,
    every: Duration,
    rewrite: bool,
    shown: bool,
}

impl Line {
    /// Rewritten in place on a terminal every 0.5 s; every 5 s as plain lines in a log.
    pub fn new() -> Line {
        let tty = std::io::stderr().is_terminal();
        Line {
            last: None,
            every: Duration::from_millis(if tty { 500 } else { 5000 }),
            rewrite: tty,
            shown: false,
        }
    }

    /// Plain lines at most every `every`, terminal or not.
    pub fn plain(every: Duration) -> Line {
        Line {
            last: None,
            every,
            rewrite: false,
            shown: false,
        }
    }

    /// Shows `text` when the last line is old enough; `text` is built only then.
    pub fn show(&mut self, text: impl FnOnce() -> String) {
        if self.last.is_some_and(|l| l.elapsed() < self.every) {
            return;
        }
        self.last = Some(Instant::now());
        if self.rewrite {
            crate::out::status_line(&text());
            self.shown = true;
        } else {
            eprintln!("{}", text());
        }
    }

    /// Ends a rewritten line, so what follows starts on a line of its own.
    pub fn end(&mut self) {
        if self.shown {
            eprintln!();
            self.shown = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_carries_the_pace_so_far_to_the_end() {
        let ten = Duration::from_secs(10);
        assert_eq!(eta_s(0.0, 100.0, ten), None);
        assert_eq!(eta_s(25.0, 100.0, ten), Some(30.0));
        assert_eq!(eta_s(120.0, 100.0, ten), Some(0.0));
        assert_eq!(eta_text(50.0, 100.0, ten), ", ETA 10s");
        assert_eq!(eta_text(0.0, 100.0, ten), ", ETA ?");
    }

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(duration_text(16.4), "16s");
        assert_eq!(duration_text(125.0), "2m05s");
        assert_eq!(duration_text(3720.0), "1h02m");
        assert_eq!(duration_text(-3.0), "0s");
    }
}
