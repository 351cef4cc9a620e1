//! The one thread that does every screenshot's pixel work (PNG decode, downscale, JPEG/WebP/PNG
//! encode), one frame at a time, instead of whichever blocking-pool thread is free.
//!
//! Why one thread: the work is CPU-bound (~15–20 ms per agent-size frame here), so a second at
//! once finishes no sooner on a 2–4 core box, and its scratch memory stays in one place. JPEG
//! with optimised Huffman tables keeps every quantised block of the image (~6.6 MB for
//! 576x1280: per-component row buffers and block vectors of 0.7–1.5 MB, under glibc's mmap
//! threshold), and glibc gives each thread its own arena. Spread over the blocking pool, every
//! thread that ever encoded kept such an arena between heap trims: the 32-phone farm's peak RSS
//! (VmHWM) was 101–109 MB with the work on the pool against 62 MB with those tables off
//! (`docs/performance.md`, "Issue 12, fifth pass"). On this thread the scratch is reused call
//! after call in one arena.
//!
//! How many frames wait here is bounded by [`super::source::FRAME_SLOTS`]: a job is sent only
//! by a caller holding a frame slot (or doing a PNG passthrough, which only scans rows).

use std::sync::mpsc;
use std::sync::OnceLock;

use crate::device::error::DeviceError;

type Job = Box<dyn FnOnce() + Send>;

/// The job queue of the codec thread; `None` when the thread could not be started (then each
/// job runs on tokio's blocking pool, as before).
fn queue() -> Option<&'static mpsc::Sender<Job>> {
    static QUEUE: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("frame-codec".into())
                .spawn(move || {
                    // Ends when the sender is dropped (never: it lives in a static).
                    for job in rx {
                        job();
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// Runs `work` on the codec thread and waits for its result without blocking the runtime.
///
/// Errors: [`DeviceError::Internal`] ("image task failed") if `work` panicked (test builds;
/// release builds abort on panic, `Cargo.toml`).
pub async fn run<T, F>(work: F) -> Result<T, DeviceError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let failed = || DeviceError::Internal("image task failed".into());
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        // Caught so that one bad frame does not end the thread for every later screenshot.
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
        let _ = tx.send(out);
    });
    let unsent = match queue() {
        Some(q) => q.send(job).err().map(|e| e.0),
        None => Some(job),
    };
    if let Some(job) = unsent {
        tokio::task::spawn_blocking(job)
            .await
            .map_err(|_| failed())?;
    }
    match rx.await {
        Ok(Ok(value)) => Ok(value),
        _ => Err(failed()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_run_on_the_one_named_thread_and_a_panic_is_an_error() {
        let name = || std::thread::current().name().map(str::to_owned);
        let first = run(name).await.unwrap();
        assert_eq!(first.as_deref(), Some("frame-codec"));
        let failed = run(|| -> u8 { panic!("a bad frame") }).await;
        assert!(matches!(failed, Err(DeviceError::Internal(_))));
        // The thread survives the panic.
        assert_eq!(run(name).await.unwrap(), first);
    }
}
