//! Generator-based fuzzing of every parser of untrusted bytes (`docs/reliability.md`): each
//! target of `tests/fuzz/targets.rs` runs on inputs `proptest` derives from the real captures in
//! `tests/fixtures/` (byte flips, insertions of protocol tokens, cuts, splices, duplications)
//! and on raw random bytes. A short, fixed-seed budget runs in `cargo test`; set `FUZZ_CASES`
//! (cases per target) and optionally `FUZZ_SEED` for a long offline run. The coverage-guided
//! engine (AFL++) runs the same targets through `benches/fuzz_afl.rs`.

#[path = "fuzz/targets.rs"]
mod targets;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

/// Counts, per thread, the bytes allocated and their peak: a parser's peak while it handles
/// one input is its memory per input (work it hands to other threads is not counted).
struct CountingAlloc;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn note_alloc(size: usize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + size;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn note_free(size: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(size)));
}

// SAFETY: every call is forwarded to `System` unchanged; the counters only observe sizes.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_alloc(layout.size());
        // SAFETY: same layout, as the caller guaranteed it.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note_free(layout.size());
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_free(layout.size());
        note_alloc(new_size);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Bytes allocated at peak (above what was live before) while `f` ran on this thread.
fn peak_while(f: impl FnOnce()) -> usize {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    f();
    PEAK.with(Cell::get).saturating_sub(base)
}

/// Memory allowed per input: 64 bytes per input byte plus 4 MiB (the fixed buffers: a 1 MiB ADB
/// payload, the 1 MiB shell v2 packet bound, the runtime's first use).
fn memory_bound(input_len: usize) -> usize {
    64 * input_len + 4 * 1024 * 1024
}

/// Tokens the parsers split on or look for; inserted by the mutator.
const TOKENS: &[&[u8]] = &[
    b"\0",
    b"\n",
    b"\r\n",
    b"\r\r\n",
    b"=",
    b":",
    b"[",
    b"]",
    b"{",
    b"}",
    b"\"",
    b",",
    b" ",
    b"\t",
    b"<node ",
    b"/>",
    b"</node>",
    b"<hierarchy rotation=\"1\">",
    b"bounds=\"[0,0][9,9]\"",
    b"&amp;",
    b"&#",
    b"mCurrentFocus=Window{",
    b"mResumedActivity",
    b"/.",
    b"level: ",
    b"Physical size: ",
    b"Override density: ",
    b"x",
    b"-1",
    b"4294967295",
    b"99999999999999999999",
    b"device",
    b"offline",
    b"transport_id:",
    b"usb:",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"\xff\xff\xff\xff",
    b"\x89PNG\r\n\x1a\n",
    b"IHDR",
    b"CNXN",
    b"OPEN",
    b"WRTE",
    b"shell,v2,raw:",
    b"sync:",
    b"SEND",
    b"DATA",
    b"DONE",
    b"RECV",
    b"--XBOUND\r\n",
    b"--XBOUND--",
    b"Content-Disposition: form-data; name=\"file\"; filename=\"",
    b"\"packet_id\":",
    b"\"payload\":",
    b"\"type\":\"tool.invoke\"",
    b"\"schema\":\"xagent.connector.packet/v1\"",
];

/// One edit of a seed; positions and lengths are taken modulo the current size.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Token(usize, usize),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
    Word(usize, u32),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Flip(p, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Insert(p, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(p, t)| Edit::Token(p, t)),
        (any::<usize>(), 0usize..64).prop_map(|(p, n)| Edit::Delete(p, n)),
        (any::<usize>(), 0usize..256).prop_map(|(p, n)| Edit::Duplicate(p, n)),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), any::<u32>()).prop_map(|(p, w)| Edit::Word(p, w)),
    ]
}

fn apply(mut data: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
        match *e {
            Edit::Flip(p, b) if !data.is_empty() => {
                let i = p % data.len();
                data[i] ^= b | 1;
            }
            Edit::Flip(..) => {}
            Edit::Insert(p, b) => data.insert(at(p, data.len()), b),
            Edit::Token(p, t) => {
                let i = at(p, data.len());
                data.splice(i..i, TOKENS[t % TOKENS.len()].iter().copied());
            }
            Edit::Delete(p, n) => {
                let i = at(p, data.len());
                let end = (i + n).min(data.len());
                data.drain(i..end);
            }
            Edit::Duplicate(p, n) => {
                let i = at(p, data.len());
                let end = (i + n).min(data.len());
                let copy = data[i..end].to_vec();
                data.splice(end..end, copy);
            }
            Edit::Truncate(p) => data.truncate(at(p, data.len())),
            Edit::Word(p, w) if data.len() >= 4 => {
                // Length and magic fields of binary frames are little- or big-endian u32s.
                let i = p % (data.len() - 3);
                data[i..i + 4].copy_from_slice(&w.to_le_bytes());
            }
            Edit::Word(..) => {}
        }
    }
    data
}

/// libFuzzer's `-max_len` for the inputs the generator makes: random bytes, and mutations of
/// a window of at most this many bytes of a seed (at the start of the capture or at a line
/// boundary inside it, so every part of a large capture is reached). Full-size seeds still run:
/// each unmutated at the start of a run, and mutated whole in 1 of 20 inputs.
const MAX_LEN: usize = 4096;

/// The window of `seed` an input starting near `start` mutates: the whole seed when it fits in
/// [`MAX_LEN`]; else `MAX_LEN` bytes from the start (1 in 4) or from the line after `start`.
fn window(seed: &[u8], start: usize) -> &[u8] {
    if seed.len() <= MAX_LEN {
        return seed;
    }
    let mut at = 0;
    if !start.is_multiple_of(4) {
        at = start % (seed.len() - MAX_LEN + 1);
        if let Some(nl) = seed[at..].iter().position(|&b| b == b'\n') {
            at = (at + nl + 1).min(seed.len());
        }
    }
    &seed[at..(at + MAX_LEN).min(seed.len())]
}

fn inputs(seeds: Arc<Vec<Vec<u8>>>) -> impl Strategy<Value = Vec<u8>> {
    let n = seeds.len();
    let windows = Arc::clone(&seeds);
    prop_oneof![
        3 => proptest::collection::vec(any::<u8>(), 0..1024),
        16 => (0..n, any::<usize>(), proptest::collection::vec(edit(), 0..10)).prop_map(
            move |(i, start, edits)| {
                let mut input = apply(window(&windows[i], start).to_vec(), &edits);
                input.truncate(MAX_LEN);
                input
            }
        ),
        1 => (0..n, proptest::collection::vec(edit(), 0..10))
            .prop_map(move |(i, edits)| apply(seeds[i].clone(), &edits)),
    ]
}

/// CPU time (user + system, in clock ticks of 10 ms) the thread `/proc/self/task/<tid>` has
/// used; `None` where procfs is absent.
fn thread_cpu_ticks(tid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ').skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// This thread's id as procfs names it.
fn current_tid() -> Option<String> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// CPU time one input may use before it counts as a hang: 10 s (the largest capture, 346 KB,
/// takes under 50 ms in the debug build). CPU time, not wall time, so a process paused with
/// SIGSTOP or starved by other work is never taken for a hang.
const HANG_CPU_TICKS: u64 = 1000;

/// The input a fuzz thread is running, for the watchdog: bumped `generation` per input.
#[derive(Default)]
struct Running {
    generation: AtomicU64,
    input: Mutex<Option<Arc<Vec<u8>>>>,
    done: AtomicBool,
}

/// Watches the fuzz thread `tid`: if one input keeps it busy for [`HANG_CPU_TICKS`], the input
/// is written to `CARGO_TARGET_TMPDIR` and the process aborts (a hang cannot be unwound).
fn watchdog(name: &str, tid: &str, running: &Running) {
    let mut seen = (u64::MAX, 0u64);
    while !running.done.load(Ordering::Relaxed) {
        std::thread::park_timeout(std::time::Duration::from_millis(200));
        let generation = running.generation.load(Ordering::Relaxed);
        let Some(cpu) = thread_cpu_ticks(tid) else {
            return;
        };
        if generation != seen.0 {
            seen = (generation, cpu);
        } else if cpu.saturating_sub(seen.1) > HANG_CPU_TICKS {
            let input = running.input.lock().map(|i| i.clone()).ok().flatten();
            let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("fuzz-hang-{name}-{generation}.bin"));
            if let Some(input) = input {
                let _ = std::fs::write(&path, input.as_slice());
            }
            eprintln!(
                "fuzz {name}: input {generation} ran {} s of CPU: a hang; input in {}",
                (cpu - seen.1) / 100,
                path.display()
            );
            std::process::abort();
        }
    }
}

/// Ends the watchdog when dropped: sets its flag and wakes it.
struct Stop<'a>(&'a AtomicBool, Option<std::thread::Thread>);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        if let Some(t) = &self.1 {
            t.unpark();
        }
    }
}

/// Runs one target for `FUZZ_CASES` cases (default `default_cases`), seeded by `FUZZ_SEED`
/// (default fixed, so CI is reproducible). Every seed also runs unmutated. `FUZZ_PROGRESS`
/// (cases, default 1 000 000) sets how often a long run prints its count so far.
fn fuzz(name: &str, default_cases: u32) {
    let target = targets::target(name).expect("known target");
    let seeds = Arc::new(targets::seeds(target));
    let running = Running::default();
    let tid = current_tid();
    std::thread::scope(|scope| {
        let watching = tid
            .as_deref()
            .map(|tid| scope.spawn(|| watchdog(name, tid, &running)));
        // Stops the watchdog however the run ends, a failed seed's panic included.
        let _stop = Stop(&running.done, watching.as_ref().map(|w| w.thread().clone()));
        let result = fuzz_cases(name, target, seeds, default_cases, &running, tid.as_deref());
        if let Err(e) = result {
            panic!("fuzz target {name} failed: {e}");
        }
    });
}

fn fuzz_cases(
    name: &str,
    target: &targets::Target,
    seeds: Arc<Vec<Vec<u8>>>,
    default_cases: u32,
    running: &Running,
    tid: Option<&str>,
) -> Result<(), proptest::test_runner::TestError<Vec<u8>>> {
    let env = |key: &str| std::env::var(key).ok().and_then(|v| v.parse::<u64>().ok());
    let cases = env("FUZZ_CASES").map_or(default_cases, |c| c.min(u64::from(u32::MAX)) as u32);
    let seed = env("FUZZ_SEED").unwrap_or(0x5eed_0010_u64);
    let progress = env("FUZZ_PROGRESS").unwrap_or(1_000_000).max(1);
    let worst = Cell::new((0usize, 0usize));
    let run_one = |input: Vec<u8>| -> usize {
        let input = Arc::new(input);
        running.generation.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut slot) = running.input.lock() {
            *slot = Some(Arc::clone(&input));
        }
        let peak = peak_while(|| (target.run)(&input));
        if peak > worst.get().0 {
            worst.set((peak, input.len()));
        }
        peak
    };
    for s in seeds.iter() {
        let peak = run_one(s.clone());
        assert!(
            peak <= memory_bound(s.len()),
            "{name}: {peak} bytes allocated for a {}-byte seed",
            s.len()
        );
    }
    let config = Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        max_shrink_iters: 2000,
        ..Config::default()
    };
    let cpu_before = tid.and_then(thread_cpu_ticks);
    let started = std::time::Instant::now();
    let mut runner = TestRunner::new(config);
    let count = Cell::new(0u64);
    let result = runner.run(&inputs(Arc::clone(&seeds)), |input| {
        let len = input.len();
        let peak = run_one(input);
        count.set(count.get() + 1);
        if count.get().is_multiple_of(progress) {
            let elapsed = started.elapsed().as_secs_f64();
            eprintln!(
                "fuzz {name}: seed {seed}: {} cases in {elapsed:.0} s ({:.0} execs/s) so far",
                count.get(),
                count.get() as f64 / elapsed.max(1e-9)
            );
        }
        prop_assert!(
            peak <= memory_bound(len),
            "{peak} bytes allocated for a {len}-byte input"
        );
        Ok(())
    });
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = match (cpu_before, tid.and_then(thread_cpu_ticks)) {
        (Some(a), Some(b)) => format!("{:.1}", (b - a) as f64 / 100.0),
        _ => "?".into(),
    };
    eprintln!(
        "fuzz {name}: seed {seed}: {cases} cases + {} seeds in {elapsed:.2} s, {cpu} s CPU ({:.0} execs/s), peak memory {} KiB (input {} bytes)",
        seeds.len(),
        f64::from(cases) / elapsed.max(1e-9),
        worst.get().0 / 1024,
        worst.get().1
    );
    result.map(|_| ())
}

macro_rules! fuzz_tests {
    ($($name:ident: $cases:expr;)*) => {$(
        #[test]
        fn $name() {
            fuzz(stringify!($name), $cases);
        }
    )*};
}

// Budgets sized for ~0.5–1 s of CPU per target in the debug build (about 10 s of CPU for all,
// so ~5 s on 2 idle cores); the long offline runs set `FUZZ_CASES` (docs/reliability.md §1).
fuzz_tests! {
    envelope: 30000;
    uiautomator: 4000;
    dumpsys_battery: 8000;
    dumpsys_window: 6000;
    dumpsys_power: 3000;
    getprop: 2400;
    wm: 20000;
    packages: 16000;
    devices: 16000;
    screencap_png: 6000;
    adb_frame: 20000;
    shell_v2: 40000;
    pairing: 30000;
    multipart: 24000;
    sim_transport: 3000;
}

#[test]
fn every_target_runs_here() {
    for t in targets::TARGETS {
        assert!(
            [
                "envelope",
                "uiautomator",
                "dumpsys_battery",
                "dumpsys_window",
                "dumpsys_power",
                "getprop",
                "wm",
                "packages",
                "devices",
                "screencap_png",
                "adb_frame",
                "shell_v2",
                "pairing",
                "multipart",
                "sim_transport"
            ]
            .contains(&t.name),
            "target {} has no test",
            t.name
        );
        assert!(!targets::seeds(t).is_empty());
    }
}

/// The harness's own checks: a future that can never finish is reported, not waited on.
#[test]
fn drive_reports_a_future_that_never_finishes() {
    assert_eq!(targets::drive(std::future::pending::<u8>()), None);
    assert_eq!(targets::drive(std::future::ready(7u8)), Some(7));
}

#[test]
fn windows_stay_inside_the_seed_and_max_len() {
    let seed: Vec<u8> = (0..20_000u32)
        .flat_map(|i| format!("line {i}\n").into_bytes())
        .collect();
    assert_eq!(window(&seed, 0), &seed[..MAX_LEN]);
    for start in [1usize, 5, 12_345, usize::MAX] {
        let w = window(&seed, start);
        assert!(!w.is_empty() && w.len() <= MAX_LEN);
        // A window inside a capture opens on a line.
        assert!(w.starts_with(b"line "), "{:?}", &w[..8]);
    }
    assert_eq!(window(b"short", 3), b"short");
}

#[test]
fn the_watchdog_reads_this_threads_cpu_time() {
    let tid = current_tid().expect("procfs names this thread");
    let before = thread_cpu_ticks(&tid).expect("its CPU time");
    // Busy until one clock tick (10 ms of CPU) is charged: counted in CPU, not wall time.
    let mut x = 0u64;
    while thread_cpu_ticks(&tid).expect("its CPU time") == before {
        for i in 0..100_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
    }
}

/// Crashes and violations the targets found, replayed as plain inputs.
mod regressions {
    use super::targets;

    #[test]
    fn shell_v2_header_declaring_4_gib_is_not_buffered() {
        // Before the fix the decoder kept every later byte waiting for a 4 GiB packet.
        let mut input = vec![0u8, 1, 0xff, 0xff, 0xff, 0xff];
        input.extend(std::iter::repeat_n(b'x', 70_000));
        (targets::target("shell_v2").unwrap().run)(&input);
    }
}
