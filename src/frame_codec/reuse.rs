//! Frame-sized buffers kept between screenshots and handed back to the OS when the connector
//! goes idle. A 1080x2400 agent-size screenshot touches ~19 MB of fresh memory (the 10.4 MB raw
//! frame, the resizer's 5.5 MB intermediate, the 2.9 MB downscaled frame); mapped anew each call,
//! faulting and zeroing those pages was over half of the connector's CPU per call (`perf`,
//! docs/performance.md "Issue 12, fourth pass"). Kept while screenshots keep coming, they cost no
//! faults; [`IDLE`] after the last one they are dropped, so idle RSS is what it was without reuse.
//!
//! Bounded: at most [`MAX_BUFFERS`] byte buffers and [`MAX_RESIZERS`] resizers are kept; more
//! concurrent captures allocate and free as before.

use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use fast_image_resize::Resizer;

/// How long the buffers are kept after the last screenshot (an agent loop takes its next one
/// within a second or two; an idle box gives the memory back soon after).
pub const IDLE: Duration = Duration::from_secs(1);

/// How often the heap is trimmed while screenshots keep coming.
pub const TRIM_PERIOD: Duration = Duration::from_secs(1);

/// Byte buffers kept: one raw frame or decoded PNG and one downscaled frame (a third, for a
/// second phone's capture in flight, raised the 32-phone farm's RSS more than it saved).
pub const MAX_BUFFERS: usize = 2;

/// Resizers kept (each holds its convolution intermediate, 5.5 MB for 1080x2400 → 576x1280).
pub const MAX_RESIZERS: usize = 1;

/// Buffers smaller than this are not worth keeping (bytes): glibc's heap recycles them already.
const MIN_KEPT: usize = 1024 * 1024;

#[derive(Default)]
struct Kept {
    buffers: Vec<Vec<u8>>,
    resizers: Vec<Resizer>,
    last_use: Option<Instant>,
    releaser_started: bool,
}

struct Shared {
    kept: Mutex<Kept>,
    returned: Condvar,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| Shared {
        kept: Mutex::new(Kept::default()),
        returned: Condvar::new(),
    })
}

fn lock() -> MutexGuard<'static, Kept> {
    // A panic elsewhere while holding the lock leaves plain buffers behind: still usable.
    shared().kept.lock().unwrap_or_else(|p| p.into_inner())
}

/// An empty buffer (length 0) with room for at least `capacity` bytes: the smallest kept one
/// that fits and is at most twice that, else a new allocation. Its old contents are gone from the caller's view (length 0).
pub fn take_buffer(capacity: usize) -> Vec<u8> {
    let mut kept = lock();
    kept.last_use = Some(Instant::now());
    let best = kept
        .buffers
        .iter()
        .enumerate()
        // Not a frame buffer for a downscaled copy: its whole size would stay resident.
        .filter(|(_, b)| b.capacity() >= capacity && b.capacity() / 2 <= capacity)
        .min_by_key(|(_, b)| b.capacity())
        .map(|(i, _)| i);
    match best {
        Some(i) => {
            let mut buf = kept.buffers.swap_remove(i);
            buf.clear();
            buf
        }
        None => {
            drop(kept);
            Vec::with_capacity(capacity)
        }
    }
}

/// Gives a buffer back for the next capture; dropped when it is small or the pool is full (the
/// smallest kept one makes room for a larger one).
pub fn give_back(buf: Vec<u8>) {
    if buf.capacity() < MIN_KEPT {
        return;
    }
    let mut kept = lock();
    kept.last_use = Some(Instant::now());
    if kept.buffers.len() >= MAX_BUFFERS {
        let smallest = kept
            .buffers
            .iter()
            .enumerate()
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, b)| (i, b.capacity()));
        match smallest {
            Some((i, cap)) if cap < buf.capacity() => {
                kept.buffers.swap_remove(i);
            }
            _ => return,
        }
    }
    kept.buffers.push(buf);
    wake_releaser(kept);
}

/// A resizer, with its intermediate buffer if one was kept.
pub fn take_resizer() -> Resizer {
    let mut kept = lock();
    kept.last_use = Some(Instant::now());
    kept.resizers.pop().unwrap_or_default()
}

/// Gives a resizer back (dropped when [`MAX_RESIZERS`] are kept).
pub fn give_back_resizer(resizer: Resizer) {
    let mut kept = lock();
    kept.last_use = Some(Instant::now());
    if kept.resizers.len() < MAX_RESIZERS {
        kept.resizers.push(resizer);
    }
    wake_releaser(kept);
}

/// Bytes kept right now (buffers' capacity plus resizers' intermediates).
pub fn kept_bytes() -> usize {
    let kept = lock();
    kept.buffers.iter().map(Vec::capacity).sum::<usize>()
        + kept
            .resizers
            .iter()
            .map(Resizer::size_of_internal_buffers)
            .sum::<usize>()
}

fn wake_releaser(mut kept: MutexGuard<'static, Kept>) {
    if !kept.releaser_started {
        kept.releaser_started = true;
        let spawned = std::thread::Builder::new()
            .name("frame-buffers".into())
            .spawn(release_when_idle);
        if spawned.is_err() {
            // No thread: keep nothing rather than keep it forever.
            kept.releaser_started = false;
            kept.buffers.clear();
            kept.resizers.clear();
            return;
        }
    }
    drop(kept);
    shared().returned.notify_one();
}

/// The releaser thread. While screenshots come, it trims the heap at most every
/// [`TRIM_PERIOD`] (the smaller buffers of image work — JPEG blocks, 1 MiB WRTE payloads — land in
/// per-thread arenas that glibc does not shrink by itself; trimming after every call, as before,
/// cost faults on the next one). [`IDLE`] after the last take or give-back it drops everything
/// kept and trims once more; then it sleeps until something is kept again.
fn release_when_idle() {
    let shared = shared();
    let mut kept = lock();
    let mut last_trim = Instant::now();
    let mut trimmed_since_use = false;
    loop {
        let Some(last_use) = kept.last_use else {
            kept = shared
                .returned
                .wait(kept)
                .unwrap_or_else(|p| p.into_inner());
            continue;
        };
        if last_trim < last_use {
            trimmed_since_use = false;
        }
        let idle_for = last_use.elapsed();
        if idle_for >= IDLE {
            if trimmed_since_use && kept.buffers.is_empty() && kept.resizers.is_empty() {
                kept = shared
                    .returned
                    .wait(kept)
                    .unwrap_or_else(|p| p.into_inner());
                continue;
            }
            let dropped = (
                std::mem::take(&mut kept.buffers),
                std::mem::take(&mut kept.resizers),
            );
            drop(kept);
            drop(dropped);
            trim_heap();
            last_trim = Instant::now();
            trimmed_since_use = true;
            kept = lock();
            continue;
        }
        let since_trim = last_trim.elapsed();
        if since_trim >= TRIM_PERIOD {
            drop(kept);
            trim_heap();
            last_trim = Instant::now();
            kept = lock();
            continue;
        }
        let wait = (IDLE - idle_for).min(TRIM_PERIOD - since_trim);
        kept = shared
            .returned
            .wait_timeout(kept, wait)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

/// Hands free heap pages back to the OS: `malloc_trim(0)` releases the free pages of every glibc
/// arena (glibc ≥ 2.8, `malloc_trim(3)`); elsewhere a no-op.
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own free lists; no Rust object is touched.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: the pool is process-wide, and tests of one binary run in parallel.
    #[test]
    fn buffers_are_reused_bounded_and_released_when_idle() {
        let big = take_buffer(4 << 20);
        assert!(big.capacity() >= 4 << 20);
        let ptr = big.as_ptr();
        give_back(big);
        // A request that fits reuses the kept buffer, emptied; one under half its size does not.
        let small = take_buffer(1 << 20);
        assert_ne!(small.as_ptr(), ptr);
        let again = take_buffer(3 << 20);
        assert_eq!(again.as_ptr(), ptr);
        assert!(again.is_empty());
        give_back(again);
        // Small buffers are not kept; the pool never holds more than MAX_BUFFERS.
        give_back(Vec::with_capacity(1024));
        for _ in 0..MAX_BUFFERS + 2 {
            give_back(Vec::with_capacity(3 << 20));
        }
        assert!(lock().buffers.len() <= MAX_BUFFERS);
        give_back_resizer(take_resizer());
        assert!(kept_bytes() >= 4 << 20);
        // Idle: everything is dropped.
        let deadline = Instant::now() + IDLE * 10;
        while kept_bytes() > 0 && Instant::now() < deadline {
            std::thread::sleep(IDLE / 4);
        }
        assert_eq!(kept_bytes(), 0);
        assert!(lock().resizers.is_empty());
    }
}
