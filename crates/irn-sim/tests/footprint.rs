//! A run's footprint at set-up (`irn_sim::sim::Footprint`) is a floor under what the run
//! allocates: measured here by counting the live bytes of the whole process while it runs.
//! One test, alone in its binary, so no other test's allocations are counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use irn_sim::sim::Footprint;

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(live, Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(p, layout) }
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        grew(size);
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(p, layout, size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// (footprint, bytes the run allocated at its peak beyond what was live before it).
fn measured(scenario: &str) -> (u64, u64) {
    let sc = irn_sim::scenario::parse(scenario, "t", Path::new("."), &[]).unwrap();
    let cfg = &sc.runs[0].config;
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let result = irn_sim::run(cfg, &mut |_| {});
    assert_eq!(result.summary.flows_incomplete, 0);
    drop(result);
    (
        Footprint::of(cfg).total(),
        (PEAK.load(Relaxed) - before) as u64,
    )
}

#[test]
fn the_footprint_is_a_floor_under_what_a_run_allocates() {
    // 255 input-queued switches of 128 ports: 16.6 MB of virtual output queues.
    let voqs = "[topology]\nkind = \"leaf-spine\"\nleaves = 128\nhosts_per_leaf = 1\n\
                spines = 127\n[workload]\nduration = \"1us\"\n";
    // 8 hosts and 8,000 flows on one shared-buffer switch: the flows and their rows.
    let flows = "[topology]\nkind = \"star\"\nhosts = 8\nlink_rate = \"100Gbps\"\n\
                 [switch]\nmodel = \"shared-buffer\"\n[workload]\nduration = \"100us\"\n\
                 load = 0.9\nsizes = { fixed = \"1KB\" }\n";
    for (what, scenario, least) in [("voqs", voqs, 0.8), ("flows", flows, 0.5)] {
        let (floor, peak) = measured(scenario);
        eprintln!("{what}: footprint {floor} B, peak {peak} B");
        assert!(
            floor <= peak,
            "{what}: footprint {floor} B over the run's {peak} B"
        );
        assert!(
            floor as f64 >= least * peak as f64,
            "{what}: footprint {floor} B, under {least} of the run's {peak} B"
        );
    }
}
