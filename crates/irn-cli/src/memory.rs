//! Whether a run fits in the memory this machine gives irn, checked before it starts.
//!
//! A run's set-up state is known before its first event ([`Footprint`]); on a large fabric it
//! can be gigabytes (an input-queued switch's virtual output queues grow with the square of its
//! radix). Without a check, a run too large for the machine ends in an allocation failure or
//! the kernel's out-of-memory killer, with no word of why. With it, such a run is refused before
//! anything is written, with its figure and what holds most of it, and runs that each fit but
//! not together run fewer at a time (the outputs do not depend on how many run at once).

use anyhow::{bail, Result};
use irn_sim::sim::Footprint;

/// Bytes irn may still allocate, and where that bound comes from; `None` where it cannot be
/// read (not Linux), and then nothing is checked.
pub fn available() -> Option<(u64, &'static str)> {
    let mut bounds = Vec::new();
    let proc = |path: &str| std::fs::read_to_string(path).ok();
    if let Some(kb) = proc("/proc/meminfo").and_then(|t| field_kb(&t, "MemAvailable:")) {
        bounds.push((
            kb * 1024,
            "available memory (MemAvailable in /proc/meminfo)",
        ));
    }
    if let Some(left) = cgroup_left() {
        bounds.push((left, "the cgroup's memory.max less its memory.current"));
    }
    let limit = proc("/proc/self/limits").and_then(|t| address_space_limit(&t));
    if let (Some(limit), Some(kb)) = (limit, status_kb("VmSize:")) {
        bounds.push((
            limit.saturating_sub(kb * 1024),
            "the address-space limit (ulimit -v)",
        ));
    }
    bounds.into_iter().min_by_key(|&(bytes, _)| bytes)
}

/// A field of this process's `/proc/self/status` in kB (`VmHWM:`, its peak resident memory),
/// if known.
pub fn status_kb(name: &str) -> Option<u64> {
    field_kb(&std::fs::read_to_string("/proc/self/status").ok()?, name)
}

/// `name: N kB` in a `/proc` file.
fn field_kb(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The soft limit of `/proc/self/limits`'s "Max address space" row, in bytes; `None` when
/// unlimited.
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// What the process's cgroup (v2) lets it allocate beyond what its members hold; `None`
/// without a limit.
fn cgroup_left() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?;
    let current: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// A size for people: `1.2 GB`, `340 MB`.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GB", b as f64 / f64::from(1 << 30)),
        b => format!("{} MB", b.div_ceil(1 << 20)),
    }
}

/// A run's floor for `irn validate`: `at least 1.5 GB before the first packet (1.3 GB of it the
/// switches' queues)`.
pub fn describe(floor: &Footprint) -> String {
    let (part, bytes) = floor.largest();
    format!(
        "at least {} before the first packet ({} of it {part})",
        size(floor.total()),
        size(bytes)
    )
}

/// Refuses a run whose set-up state (its [`Footprint`], `floor`) is more than the `available`
/// memory, naming the run (`what`), the figure and what holds most of it.
pub fn check(what: &str, floor: &Footprint, available: Option<(u64, &str)>) -> Result<()> {
    let Some((free, source)) = available else {
        return Ok(());
    };
    if floor.total() <= free {
        return Ok(());
    }
    let (part, bytes) = floor.largest();
    let hint = if floor.input_queued && bytes == floor.switches {
        ": the input-queued switch keeps 4 bytes per pair of its ports, and switch.model = \
         \"shared-buffer\" none"
    } else {
        ""
    };
    bail!(
        "{what}: needs at least {} of memory before its first packet ({} of it {part}{hint}), \
         more than the {} left by {source}; simulate a smaller network, or run it where more \
         memory is free",
        size(floor.total()),
        size(bytes),
        size(free),
    )
}

/// Every run of a scenario `file`'s `runs` checked ([`check`]) against the `available` memory:
/// their footprints, in order, when each fits.
pub fn check_runs(
    file: &str,
    runs: &[irn_sim::scenario::Run],
    available: Option<(u64, &str)>,
) -> Result<Vec<Footprint>> {
    (runs.iter())
        .map(|r| {
            let floor = Footprint::of(&r.config);
            check(&format!("{file}: `{}`", r.name), &floor, available)?;
            Ok(floor)
        })
        .collect()
}

/// How many of the runs whose footprints are `runs` to run at once, at most `threads`: as many
/// as fit together in the `available` memory, taking the largest together (at least one, which
/// [`check`] has passed). Says so on stderr when memory, not `threads`, sets the number.
pub fn parallelism(runs: &[Footprint], threads: usize, available: Option<(u64, &str)>) -> usize {
    let Some((free, source)) = available else {
        return threads;
    };
    let mut floors: Vec<u64> = runs.iter().map(Footprint::total).collect();
    floors.sort_unstable_by(|a, b| b.cmp(a));
    let mut sum = 0;
    let fit = floors
        .iter()
        .take(threads)
        .take_while(|&&f| {
            sum += f;
            sum <= free
        })
        .count()
        .max(1);
    let asked = threads.min(runs.len());
    if fit < asked {
        errln!(
            "note: running {fit} at a time, not {asked}: the {asked} largest runs need at least \
             {} together before their first packet, more than the {} left by {source}",
            size(floors.iter().take(threads).sum()),
            size(free)
        );
    }
    fit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_fields_are_read() {
        let meminfo = "MemTotal:       24000000 kB\nMemAvailable:   12345678 kB\n";
        assert_eq!(field_kb(meminfo, "MemAvailable:"), Some(12_345_678));
        assert_eq!(field_kb(meminfo, "VmSize:"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max address space         6144000000           unlimited            bytes\n";
        assert_eq!(address_space_limit(limits), Some(6_144_000_000));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_limit(unlimited), None);
    }

    fn footprint(leaves: u32) -> Footprint {
        let text = format!(
            "[topology]\nkind = \"leaf-spine\"\nleaves = {leaves}\nhosts_per_leaf = 1\n\
             spines = 8\n[workload]\nduration = \"20us\"\n"
        );
        let sc = irn_sim::scenario::parse(&text, "t", std::path::Path::new("."), &[]);
        Footprint::of(&sc.unwrap().runs[0].config)
    }

    #[test]
    fn a_run_is_refused_only_past_the_memory_left() {
        let run = footprint(64);
        let floor = run.total();
        assert!(check("t.toml", &run, None).is_ok());
        assert!(check("t.toml", &run, Some((floor, "test"))).is_ok());
        let e = check("t.toml", &run, Some((floor - 1, "the test's bound")))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.toml: needs at least "), "{e}");
        assert!(
            e.contains("the switches' queues: the input-queued switch"),
            "{e}"
        );
        let end = "left by the test's bound; simulate a smaller network, or run it where more \
                   memory is free";
        assert!(e.ends_with(end), "{e}");
    }

    #[test]
    fn runs_that_do_not_fit_together_run_fewer_at_a_time() {
        let (small, large) = (footprint(8), footprint(64));
        let (s, l) = (small.total(), large.total());
        let runs = [small, large, large];
        for (free, threads, want) in [
            (None, 3, 3),
            (Some(2 * l + s), 3, 3),
            (Some(2 * l + s - 1), 3, 2),
            (Some(2 * l), 2, 2),
            (Some(2 * l - 1), 2, 1),
            (Some(l - 1), 3, 1),
            (Some(u64::MAX), 8, 3),
        ] {
            let free = free.map(|f| (f, "test"));
            assert_eq!(
                parallelism(&runs, threads, free),
                want,
                "{free:?} {threads}"
            );
        }
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size(340 << 20), "340 MB");
        assert_eq!(size(3 << 29), "1.5 GB");
    }
}
