//! Fuzz targets for the crate-private parsers of server bytes (see `qpslab-fuzzkit` for the
//! loop, its long mode and how to rerun one case). The hot path's `ReplyReader` and the whole
//! session are fuzzed from `tests/fuzz_*.rs` through the public API.
//!
//! Properties: no panic and no hang on any input; no allocation out of proportion to the
//! input; encode → parse gives back what was encoded.

mod framing;
mod handshake;
mod proto;
mod regressions;
mod rows;

#[global_allocator]
static ALLOC: qpslab_fuzzkit::CountingAlloc = qpslab_fuzzkit::CountingAlloc;

/// The most a parser may allocate for `n` input bytes: a few copies of the input, plus a
/// constant for small fixed-size buffers.
fn alloc_bound(n: usize) -> usize {
    64 * 1024 + 8 * n
}
