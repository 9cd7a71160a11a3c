//! The allocator: mimalloc, bound directly.

use libmimalloc_sys as mi;

// Decoding a span makes many small strings and vectors, freed together with its turn: mimalloc
// (as pydantic-core and polars use) takes 10-15 % off decoding and assembly.
#[global_allocator]
static GLOBAL: Mimalloc = Mimalloc;

/// mimalloc through its plain entry points wherever a word's alignment will do, as Rust's own
/// System allocator uses malloc: the `mimalloc` crate's allocator calls the aligned ones for
/// every allocation, whose fast path is longer and which take the generic path for anything
/// over 1 KiB. Every mimalloc block is word-aligned.
struct Mimalloc;

const WORD: usize = std::mem::size_of::<usize>();

// SAFETY: mimalloc's functions meet GlobalAlloc's contract; `mi_free` frees blocks of either kind.
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_malloc(layout.size()).cast()
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_zalloc(layout.size()).cast()
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        mi::mi_free(ptr.cast());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_realloc(ptr.cast(), new_size).cast()
        } else {
            mi::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
        }
    }
}
