//! A global allocator that counts, per thread, what a piece of code allocates, so a target can
//! assert that parsing N bytes never asks for memory out of proportion to N.
//!
//! A test binary opts in with
//! `#[global_allocator] static A: qpslab_fuzzkit::CountingAlloc = qpslab_fuzzkit::CountingAlloc;`
//! and wraps the parse in [`measure`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the current thread's requests.
pub struct CountingAlloc;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
    static TOTAL: Cell<usize> = const { Cell::new(0) };
}

/// A request this large is a parser trusting a length it read: the case is named and the
/// process aborts (unwinding out of an allocator is not allowed, and the allocation itself
/// would abort or exhaust the machine).
const HUGE: usize = 1 << 32;

fn count(size: usize) {
    if size > HUGE {
        crate::abort_on_huge_allocation(size);
    }
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
    let _ = TOTAL.try_with(|t| t.set(t.get().saturating_add(size)));
}

// SAFETY: every call is forwarded to `System` unchanged; counting touches only const-initialised
// thread-locals, which never allocate.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller upholds `alloc`'s contract, which `System` needs.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller upholds `alloc_zeroed`'s contract, which `System` needs.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: `ptr` came from `System` through this allocator; the caller upholds
        // `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The allocations [`measure`] saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Allocated {
    /// The largest single request (bytes).
    pub largest: usize,
    /// All requests added up (bytes; a `realloc` counts its new size).
    pub total: usize,
}

/// Runs `f` and returns what it allocated on this thread (zero unless [`CountingAlloc`] is
/// the global allocator).
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, Allocated) {
    let before = (LARGEST.with(|l| l.replace(0)), TOTAL.with(|t| t.replace(0)));
    let r = f();
    let m = Allocated {
        largest: LARGEST.with(|l| l.replace(before.0)),
        total: TOTAL.with(|t| t.replace(before.1)),
    };
    (r, m)
}
