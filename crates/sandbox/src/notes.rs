//! Notes for the user (one line each) from deep inside a start, e.g. why a sandbox's data is
//! not in its lab. The program decides how they are shown (`--quiet` drops them), so it can
//! name a sink; without one they go to standard error.

use std::sync::OnceLock;

static SINK: OnceLock<fn(&str)> = OnceLock::new();

/// Sends every later note to `sink` (the first call wins; later ones are ignored).
pub fn set_note_sink(sink: fn(&str)) {
    let _ = SINK.set(sink);
}

/// Shows `note` through the sink, or on standard error as `qpslab: note: ...`.
pub(crate) fn note(note: &str) {
    match SINK.get() {
        Some(sink) => sink(note),
        None => eprintln!("qpslab: note: {note}"),
    }
}
