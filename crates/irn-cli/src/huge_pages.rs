//! The heap on transparent huge pages, where Linux hands them out only on request, for the
//! runs of large networks.
//!
//! A large fabric's state (its packet slab, flows, queues and wheels: 100 MB at k = 24, 200 MB
//! at k = 32, 600 MB at k = 64) is read at random, a cache line or two an event. With 4 KB
//! pages nearly every such read also misses the TLB and walks the page tables; with 2 MB pages
//! the whole state fits in the TLB. Linux's usual setting (`transparent_hugepage` =
//! `madvise`) backs with huge pages only memory a process marks for them, and a huge page is
//! faulted in whole, so memory must be marked before it is first touched.
//!
//! A small network gains nothing: the 128-host benchmark's trace ran 1.01x the CPU time with
//! huge pages (0.91-1.11x, 12 pairs in turn) and peaked 6.4 MiB higher (38.6 against 32.2
//! MiB), a huge page faulted in whole where a few of its small pages were touched. A 1,024-host
//! fat-tree ran 0.92x the time (0.85-1.01x, 6 pairs), k = 24 and k = 32 about 0.9x. So nothing
//! is marked until a run of a network of [`LARGE_HOSTS`] hosts or more is about to start
//! ([`prepare_for`]); from then on, in that process:
//!
//! glibc is set to grow its heaps many huge pages at a time, and the allocator marks: the
//! main heap's new stretch each time it has grown, before handing any of it out beyond the
//! allocation that grew it; a thread's heap (glibc reserves each whole, 64 MB at an address
//! aligned to it, and opens it as it fills) all at once, when it first sees a block there; and
//! every allocation larger than a huge page (those glibc maps on their own), gathering the
//! pages a reallocated one had already touched into huge pages. glibc's
//! `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` does much the same from inside malloc, but only when
//! set before the process starts.
//!
//! When the system refuses an allocation, irn says so in one line, removes what it had not
//! finished writing (from a reserve of memory held back for it) and exits with status 1, where
//! the standard library would print "memory allocation of N bytes failed" and abort, leaving
//! an unfinished results folder behind.
//!
//! Marking changes which pages back the memory, never its contents: outputs are the same. The
//! kernel's own setting stays in force (with `never`, nothing changes).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use irn_sim::config::SimConfig;

/// The system allocator, with the memory it hands out marked for huge pages (on Linux with
/// glibc; elsewhere the system allocator alone).
pub struct HugePages;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod linux {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Once;

    /// A transparent huge page on x86-64 and most arm64 kernels.
    const BLOCK: usize = 2 << 20;
    /// How far past a request glibc grows its heap: the stretch marked at each growth, of
    /// which the block that glibc writes its bookkeeping into before the marking is lost.
    const TOP_PAD: usize = 16 * BLOCK;
    /// The heap's end up to which it is marked.
    static MARKED: AtomicUsize = AtomicUsize::new(0);
    /// Where the heap ended when the first block was handed out.
    static HEAP_START: AtomicUsize = AtomicUsize::new(0);
    static SETUP: Once = Once::new();
    /// Marking has started ([`enable`]).
    static ENABLED: AtomicBool = AtomicBool::new(false);
    /// glibc's heaps for threads other than the first (an arena each) are mappings of this
    /// size, at addresses aligned to it, reserved whole and opened as they fill: marked whole
    /// when a block is first seen in one, as their growth goes unseen.
    const THREAD_HEAP: usize = 64 << 20;
    /// Below glibc's smallest threshold for giving a block a mapping of its own: such a block
    /// is in a heap.
    const SMALL: usize = 128 << 10;
    /// Thread heaps already marked (by number), direct-mapped.
    static THREAD_HEAPS: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];

    /// glibc's own threshold for giving a block a mapping of its own, at start-up.
    const OWN_MAPPING: usize = 128 << 10;

    /// At start-up: blocks of [`OWN_MAPPING`] or more always get mappings of their own.
    ///
    /// glibc raises that threshold to the size of each such block freed, so after a run has
    /// freed its large blocks the next run's come from the heap, where `calloc` clears memory
    /// an earlier run had touched: zeroed memory that would have stayed unresident until used
    /// (an ordering layer's pools, most of whose blocks no NIC uses) became resident whole. In
    /// one process running Eunomia's Fig. 10 variants one after another, the three with pools
    /// peaked at 78 MiB instead of 14.
    ///
    /// The heap's top is trimmed past the same size, glibc's default (which the dynamic
    /// threshold also raises): a large free top would serve large blocks from the heap.
    pub(super) fn start() {
        // SAFETY: mallopt only sets parameters of later allocations.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_MAPPING as libc::c_int);
            libc::mallopt(libc::M_TRIM_THRESHOLD, OWN_MAPPING as libc::c_int);
        }
    }

    /// Starts marking what is allocated from now on, and has glibc grow its heap a long
    /// stretch at a time (marked as it grows).
    pub(super) fn enable() {
        if !ENABLED.swap(true, Ordering::Relaxed) {
            // SAFETY: mallopt only sets a parameter of later allocations.
            unsafe { libc::mallopt(libc::M_TOP_PAD, TOP_PAD as libc::c_int) };
        }
    }

    /// Once marking has started: marks for huge pages what the heap grew by since the last
    /// call, the thread heap `p` is in if it is new, and `[p, p + size)` when it is larger than
    /// a huge page; if `moved` (a reallocation), that range's pages already touched are
    /// gathered into huge pages too (glibc extends an allocation of its own mapping in place,
    /// so a vector that grows by doubling kept its first half on small pages: half of a k = 24
    /// run's packet slab). Before, it only follows the heap's end, so what the heap held
    /// before marking started stays on small pages.
    pub(super) fn mark(p: *mut u8, size: usize, moved: bool) {
        SETUP.call_once(|| {
            // SAFETY: sbrk(0) reads the heap's end.
            let end = unsafe { libc::sbrk(0) } as usize;
            MARKED.store(end, Ordering::Relaxed);
            HEAP_START.store(end, Ordering::Relaxed);
        });
        let on = ENABLED.load(Ordering::Relaxed);
        // SAFETY: sbrk(0) reads the heap's end.
        let end = unsafe { libc::sbrk(0) } as usize;
        let marked = MARKED.load(Ordering::Relaxed);
        if end > marked && MARKED.fetch_max(end, Ordering::Relaxed) == marked && on {
            advise(marked, end, libc::MADV_HUGEPAGE);
        }
        if !on {
            return;
        }
        let at = p as usize;
        if size < SMALL && !(HEAP_START.load(Ordering::Relaxed)..end).contains(&at) {
            let heap = at / THREAD_HEAP;
            if THREAD_HEAPS[heap % THREAD_HEAPS.len()].swap(heap, Ordering::Relaxed) != heap {
                advise(
                    heap * THREAD_HEAP,
                    (heap + 1) * THREAD_HEAP,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
        if size >= BLOCK {
            // Only the huge pages inside the block: one straddling its ends is partly another
            // mapping's, whose untouched pages a collapse would make resident.
            let (from, to) = (at.div_ceil(BLOCK) * BLOCK, (at + size) / BLOCK * BLOCK);
            if from < to {
                advise(from, to, libc::MADV_HUGEPAGE);
                if moved {
                    advise(from, to, libc::MADV_COLLAPSE);
                }
            }
        }
    }

    /// Gives `advice` for the huge pages `[from, to)` overlaps.
    fn advise(from: usize, to: usize, advice: libc::c_int) {
        let start = from / BLOCK * BLOCK;
        // SAFETY: neither advice changes memory contents: MADV_HUGEPAGE sets a flag on the
        // mappings in the range, MADV_COLLAPSE moves their pages into huge ones (unmapped parts
        // are skipped with ENOMEM, and a kernel without MADV_COLLAPSE says EINVAL: both fine).
        unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                to.div_ceil(BLOCK) * BLOCK - start,
                advice,
            );
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod linux {
    pub(super) fn start() {}
    pub(super) fn enable() {}
    pub(super) fn mark(_: *mut u8, _: usize, _: bool) {}
}

/// Hosts from which a network's state is put on huge pages: the 128-host benchmark gains
/// nothing from them, a 1,024-host fat-tree about 8 % (the module's note).
pub const LARGE_HOSTS: usize = 512;

/// Whether a run of `config` is large enough for huge pages to pay.
fn large(config: &SimConfig) -> bool {
    config.topology.hosts().len() >= LARGE_HOSTS
}

/// Starts putting what the process allocates on huge pages if `config`'s network is large
/// ([`LARGE_HOSTS`]); called as each run is about to start, before it builds its state. Once
/// started, marking goes on for the process's later runs too.
pub fn prepare_for(config: &SimConfig) {
    if large(config) {
        linux::enable();
    }
}

/// What irn says when the system refuses it memory, before it cleans up: which allocation failed,
/// and where to see what a run needs, instead of the standard library's bare "memory
/// allocation of N bytes failed". Written into `buf` without allocating; the message's length.
fn out_of_memory_message(bytes: usize, buf: &mut [u8]) -> usize {
    use std::io::Write;
    let mut w = &mut *buf;
    let room = w.len();
    let _ = writeln!(
        w,
        "error: out of memory: the system refused irn {} MB more; the run grew past the memory \
         left to it (`irn validate` prints the least a run needs before its first packet; \
         packets in flight and running flows take more)",
        bytes.div_ceil(1 << 20)
    );
    room - w.len()
}

/// Memory held back for the clean-up after a refused allocation: removing the unfinished
/// results folder allocates (paths, directory listings) when memory has just run out.
static RESERVE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
const RESERVE_LAYOUT: Layout = match Layout::from_size_align(4 << 20, 4096) {
    Ok(l) => l,
    Err(_) => panic!("a valid layout"),
};
/// An allocation has been refused: the first thread to see one cleans up and exits.
static FAILED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread is cleaning up after a refused allocation.
    static CLEANING: Cell<bool> = const { Cell::new(false) };
}

/// At start-up: large blocks always mapped on their own, and the reserve set aside.
pub fn start() {
    linux::start();
    // SAFETY: a non-zero size.
    let p = unsafe { System.alloc(RESERVE_LAYOUT) };
    RESERVE.store(p, Ordering::Relaxed);
}

/// Says why on stderr, then, with the reserve given back, removes what the command had not
/// finished writing (as Ctrl-C does) and exits with status 1. A second refusal while cleaning
/// up aborts; another thread's waits for the exit.
#[cold]
fn out_of_memory(bytes: usize) -> ! {
    use std::io::Write;
    if CLEANING.get() {
        std::process::abort();
    }
    if FAILED.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    CLEANING.set(true);
    let mut buf = [0u8; 512];
    let n = out_of_memory_message(bytes, &mut buf);
    let _ = std::io::stderr().write_all(&buf[..n]);
    let reserve = RESERVE.swap(std::ptr::null_mut(), Ordering::Relaxed);
    if !reserve.is_null() {
        // SAFETY: allocated by `start` with this layout, given back once.
        unsafe { System.dealloc(reserve, RESERVE_LAYOUT) };
    }
    crate::output::clean_up_after_out_of_memory()
}

// SAFETY: every call is the system allocator's; marking only advises the kernel.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        linux::mark(p, layout.size(), false);
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        linux::mark(p, layout.size(), false);
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(p, layout) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let q = unsafe { System.realloc(p, layout, size) };
        if q.is_null() {
            out_of_memory(size);
        }
        linux::mark(q, size, true);
        q
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    /// The 128-host benchmark stays on small pages; a 1,024-host fat-tree and larger go on
    /// huge ones.
    #[test]
    fn only_large_networks_take_huge_pages() {
        let config = |text: &str, set: &[&str]| {
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            let sc = irn_sim::scenario::parse(text, "t.toml", std::path::Path::new("."), &set);
            sc.unwrap().runs.swap_remove(0).config
        };
        let bench = include_str!("../../../scenarios/bench/leafspine128.toml");
        let k16 = include_str!("../../../scenarios/bench/fattree_k16.toml");
        let short = ["workload.duration=1us"];
        assert!(!super::large(&config(bench, &short)));
        assert!(super::large(&config(k16, &short)));
        let k8 = ["workload.duration=1us", "topology.k=8"];
        assert!(!super::large(&config(k16, &k8)), "128 hosts");
        let k10 = ["workload.duration=1us", "topology.k=10"];
        assert!(!super::large(&config(k16, &k10)), "250 hosts");
        let k14 = ["workload.duration=1us", "topology.k=14"];
        assert!(super::large(&config(k16, &k14)), "686 hosts");
    }

    /// Pages of `[p, p + len)` resident in memory (`mincore`).
    fn resident_pages(p: usize, len: usize) -> usize {
        let page = 4096;
        let start = p / page * page;
        let pages = (p + len).div_ceil(page) - start / page;
        let mut status = vec![0u8; pages];
        // SAFETY: the range covers pages of a live allocation; `status` has a byte per page.
        let r = unsafe {
            libc::mincore(
                start as *mut libc::c_void,
                pages * page,
                status.as_mut_ptr(),
            )
        };
        assert_eq!(r, 0, "mincore");
        status.iter().filter(|&&s| s & 1 != 0).count()
    }

    /// The allocator's policies, checked in order in one test: marking for huge pages, once
    /// enabled, stays on for the process (and its longer heap growth serves large blocks from
    /// the heap), so what must hold before it is checked first.
    #[test]
    fn the_allocator_keeps_small_runs_unresident_and_large_ones_on_huge_pages() {
        a_large_zeroed_block_stays_unresident_until_written();
        a_vector_grown_by_doubling_sits_on_huge_pages();
        a_threads_small_blocks_sit_on_huge_pages();
    }

    /// After `start`, a zeroed block allocated where a written one of its size was freed is
    /// still unresident until written: a fresh mapping, not the freed block cleared.
    fn a_large_zeroed_block_stays_unresident_until_written() {
        super::linux::start();
        const WORDS: usize = 1 << 17; // 1 MiB
        let mut first = vec![0u64; WORDS];
        first
            .iter_mut()
            .enumerate()
            .for_each(|(i, w)| *w = i as u64);
        drop(std::hint::black_box(first));
        let second = vec![0u64; WORDS];
        let resident = resident_pages(second.as_ptr() as usize, WORDS * 8);
        assert!(resident <= 4, "{resident} of 256 pages resident");
        assert!(std::hint::black_box(&second).iter().all(|&w| w == 0));
    }

    #[test]
    fn a_refused_allocation_is_named_without_allocating() {
        let mut buf = [0u8; 512];
        let n = super::out_of_memory_message(300 << 20, &mut buf);
        let text = std::str::from_utf8(&buf[..n]).unwrap();
        assert!(text.starts_with("error: out of memory: the system refused irn 300 MB more;"));
        assert!(text.ends_with("running flows take more)\n"), "{text}");
    }

    /// Whether the kernel hands out transparent huge pages on request (`madvise`) or always.
    fn kernel_offers_huge_pages() -> bool {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .is_ok_and(|s| s.contains("[madvise]") || s.contains("[always]"))
    }

    /// Bytes of the mapping holding `p` that sit on huge pages (`/proc/self/smaps`).
    fn huge_bytes_at(p: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps is readable");
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((from, to)) = range.split_once('-') {
                    if let (Ok(from), Ok(to)) = (
                        usize::from_str_radix(from, 16),
                        usize::from_str_radix(to, 16),
                    ) {
                        inside = (from..to).contains(&p);
                        continue;
                    }
                }
            }
            if let Some(kb) = line.strip_prefix("AnonHugePages:").filter(|_| inside) {
                let kb = kb.trim().trim_end_matches(" kB").parse::<u64>().unwrap();
                return kb * 1024;
            }
        }
        0
    }

    /// A vector grown by doubling to 64 MB, as the packet slab is, ends up mostly on huge
    /// pages, its first halves included: they were written before it grew.
    fn a_vector_grown_by_doubling_sits_on_huge_pages() {
        if !kernel_offers_huge_pages() {
            // Nothing to check: the kernel hands out no transparent huge pages.
            return;
        }
        super::linux::enable();
        let mut v: Vec<u64> = Vec::new();
        for i in 0..(64 << 20) / 8 {
            v.push(i);
        }
        let huge = huge_bytes_at(v.as_ptr() as usize + v.len() * 4);
        assert!(
            huge >= 48 << 20,
            "{} MB of the 64 MB vector on huge pages",
            huge >> 20
        );
        assert_eq!(
            v.iter().sum::<u64>(),
            (v.len() as u64) * (v.len() as u64 - 1) / 2
        );
    }

    /// Small blocks a thread allocates (per-flow state) come from its own heap, which glibc
    /// opens as it fills, unseen by the allocator: it is marked whole when first seen.
    fn a_threads_small_blocks_sit_on_huge_pages() {
        if !kernel_offers_huge_pages() {
            return;
        }
        super::linux::enable();
        let huge = std::thread::spawn(|| {
            let blocks: Vec<Box<[u8; 1024]>> =
                (0..32 << 10).map(|i| Box::new([i as u8; 1024])).collect();
            let middle = &*blocks[blocks.len() / 2] as *const _ as usize;
            let huge = huge_bytes_at(middle);
            assert!(blocks.iter().enumerate().all(|(i, b)| b[1023] == i as u8));
            huge
        })
        .join()
        .unwrap();
        assert!(
            huge >= 16 << 20,
            "{} MB of 32 MB of small blocks on huge pages",
            huge >> 20
        );
    }
}
