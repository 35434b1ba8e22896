//! Every NIC's ordering memory, sampled over time (Eunomia Fig. 17c): values worked by hand for a
//! static bitmap, Eunomia's bounded by its pool and given back at the end, and nothing sampled
//! (no key, no column) without a layer.

mod common;

use irn_core::ordering::{OrderingConfig, OrderingMode};
use irn_core::transport::TransportConfig;
use irn_core::{Bandwidth, Duration, Time};
use irn_sim::config::{LoadBalancing, Ordering, SimConfig, SwitchConfig, SwitchModel};
use irn_sim::ids::HostIdx;
use irn_sim::metrics::RunResult;
use irn_sim::topology::Topology;
use irn_sim::workload::{FlowClass, FlowSpec};

const RATE: Bandwidth = Bandwidth::from_gbps(40);

fn two_paths() -> Topology {
    common::two_paths(RATE)
}

fn flow(src: u32, dst: u32, size_bytes: u64, start_us: u64) -> FlowSpec {
    FlowSpec {
        src: HostIdx(src),
        dst: HostIdx(dst),
        size_bytes,
        start: Time::ZERO + Duration::from_us(start_us),
        class: FlowClass::Regular,
        verb: None,
    }
}

fn run(flows: Vec<FlowSpec>, ordering: Ordering, warmup_us: u64) -> RunResult {
    let mut cfg = SimConfig {
        seed: 3,
        load_balancing: LoadBalancing::Spray,
        warmup: Duration::from_us(warmup_us),
        ..SimConfig::new(
            two_paths(),
            SwitchConfig {
                model: SwitchModel::InputQueued,
                buffer_bytes: 240_000,
                pfc: None,
                ecn: None,
            },
            TransportConfig::irn(),
            flows,
        )
    };
    cfg.extra_header_bytes += ordering.mode.metadata_bytes();
    cfg.ordering = ordering;
    irn_sim::run(&cfg, &mut |_| {})
}

/// A 1 MB sprayed flow from host 0 to host 1 (about 220 µs at 40 Gb/s) under a 16 B static
/// bitmap, and a small flow back at 105 µs, the last arrival, which ends the sampled window.
/// While the big flow runs, host 1's NIC holds its 16 B bitmap and 9 B of state and host 0's
/// holds nothing: each sample reads 25 B and 0 B, a mean of 12.5 B over the two NICs (8 B
/// counting the bitmap alone).
#[test]
fn a_static_bitmap_costs_its_size_and_state_at_every_sample() {
    let flows = vec![flow(0, 1, 1_000_000, 0), flow(1, 0, 1_000, 105)];
    let layer = |interval_us| Ordering {
        mode: OrderingMode::Static { bits: 128 },
        sample_interval: Duration::from_us(interval_us),
        ..Ordering::default()
    };
    // (interval, warm-up) → samples: every multiple of the interval from the warm-up's end to
    // the last arrival.
    for (interval_us, warmup_us, samples) in [(10, 0, 10), (10, 50, 6), (25, 0, 4), (200, 0, 0)] {
        let r = run(flows.clone(), layer(interval_us), warmup_us);
        let s = &r.summary;
        let at = format!("every {interval_us} us after {warmup_us} us");
        assert_eq!(s.flows_incomplete, 0, "{at}");
        assert_eq!(s.ordering_memory_samples, Some(samples), "{at}");
        let sampled = samples > 0;
        assert_eq!(s.ordering_avg_nic_bytes, sampled.then_some(12.5), "{at}");
        // The bitmap alone: 16 B on one NIC, none on the other.
        assert_eq!(
            s.ordering_avg_nic_bitmap_bytes,
            sampled.then_some(8.0),
            "{at}"
        );
        assert_eq!(s.ordering_peak_nic_bytes, sampled.then_some(25), "{at}");
        assert_eq!(
            s.ordering_avg_connection_bytes,
            sampled.then_some(25.0),
            "{at}"
        );
        let peaks: Vec<_> = r.flows.iter().map(|f| f.ordering_peak_bytes).collect();
        assert_eq!(peaks, [Some(25), Some(25)], "{at}");
    }
    // The flow is reordered: the ideal layer held packets ahead of the expected one, so its
    // footprint grew past its 9 B of state.
    let ideal = Ordering {
        mode: OrderingMode::Ideal,
        ..Ordering::default()
    };
    let r = run(flows, ideal, 0);
    assert!(r.flows[0].ordering_peak_bytes.is_some_and(|b| b > 9));
}

/// Eight sprayed flows into host 1 over a pool of 6 blocks with a cap of 4 per connection:
/// whatever the reordering, a NIC never holds more than its pool's blocks plus a state record
/// per connection holding blocks plus every running connection's 4 B pointer, and the pool is
/// empty at the end.
#[test]
fn eunomia_stays_within_its_pool_and_gives_everything_back() {
    let mut flows: Vec<FlowSpec> = (0..8).map(|i| flow(0, 1, 60_000, 3 * i)).collect();
    flows.push(flow(1, 0, 1_000, 60));
    let config = OrderingConfig {
        block_bits: 16,
        cap_bits: 64,
        pool_blocks: 6,
        records_in_pool: false,
        ..OrderingConfig::default()
    };
    let ordering = Ordering {
        mode: OrderingMode::Eunomia,
        config,
        sample_interval: Duration::from_us(2),
        ..Ordering::default()
    };
    let r = run(flows, ordering, 0);
    let s = &r.summary;
    assert_eq!(s.flows_incomplete, 0);
    assert_eq!(s.ordering_blocks_at_end, Some(0));
    assert_eq!(s.ordering_memory_samples, Some(30));
    let (block, record, pointer) = (2, config.metadata_bytes(), OrderingConfig::DBA_BYTES);
    let pool = u64::from(config.pool_blocks * (block + record));
    let bound = pool + 8 * u64::from(pointer);
    let peak = s.ordering_peak_nic_bytes.unwrap();
    assert!(
        peak > 8 * u64::from(pointer),
        "some flow held blocks: {s:?}"
    );
    assert!(peak <= bound, "{peak} > {bound}");
    // The controller's own exact peak bounds what the samples saw of it.
    assert!(peak <= s.ordering_peak_bytes.unwrap() + 8 * u64::from(pointer));
    let most = u64::from(pointer + record + block * config.blocks_per_connection());
    for f in &r.flows {
        let p = f.ordering_peak_bytes.unwrap();
        assert!(
            (u64::from(pointer)..=most).contains(&p),
            "flow {}: {p}",
            f.flow_id
        );
    }
    let avg = s.ordering_avg_connection_bytes.unwrap();
    assert!((f64::from(pointer)..=most as f64).contains(&avg), "{avg}");
}

#[test]
fn nothing_is_sampled_without_a_layer() {
    let r = run(vec![flow(0, 1, 100_000, 0)], Ordering::default(), 0);
    let s = &r.summary;
    assert_eq!(
        (s.ordering_memory_samples, s.ordering_peak_nic_bytes),
        (None, None)
    );
    assert_eq!(r.flows[0].ordering_peak_bytes, None);
    assert_eq!(r.flows[0].ordering_refused_pool, None);
    let json = serde_json::to_string(s).unwrap();
    for key in [
        "ordering_memory_samples",
        "ordering_refused_",
        "ordering_peak_records",
    ] {
        assert!(!json.contains(key), "{key}: {json}");
    }
    // The acknowledgements are counted with or without a layer.
    assert!(s.control_bytes.ack > 0 && s.control_overhead > 0.0, "{s:?}");
}

/// Eight sprayed flows into host 1 under Eunomia, two ways short of memory: a pool that holds
/// one connection's record and a few blocks (records in the pool, the default), and a pool
/// with room for all but a limit of one tracked connection (records beside it). Each refuses
/// the other flows' reordering for its own reason, and the counters say which, per flow and in
/// the summary; every flow still finishes (the NACKed packets are resent).
#[test]
fn refusals_for_the_pool_and_for_the_connection_limit_are_counted_apart() {
    let flows: Vec<FlowSpec> = (0..8).map(|i| flow(0, 1, 60_000, 3 * i)).collect();
    let one_record = OrderingConfig {
        pool_blocks: 24 + 4,
        ..OrderingConfig::default()
    };
    let one_connection = OrderingConfig {
        max_connections: 1,
        records_in_pool: false,
        ..OrderingConfig::default()
    };
    for (config, by_limit) in [(one_record, false), (one_connection, true)] {
        let ordering = Ordering {
            mode: OrderingMode::Eunomia,
            config,
            ..Ordering::default()
        };
        let r = run(flows.clone(), ordering, 0);
        let s = &r.summary;
        assert_eq!(s.flows_incomplete, 0, "{config:?}");
        assert_eq!(s.ordering_peak_records, Some(1), "{config:?}");
        let (limit, pool) = (
            s.ordering_refused_connections.unwrap(),
            s.ordering_refused_pool.unwrap(),
        );
        if by_limit {
            assert!(limit > 0 && pool == 0, "{config:?}: {limit} {pool}");
        } else {
            assert!(limit == 0 && pool > 0, "{config:?}: {limit} {pool}");
        }
        let per_flow: u64 = r
            .flows
            .iter()
            .map(|f| f.ordering_refused_connections.unwrap())
            .sum();
        assert_eq!(per_flow, limit);
        let per_flow: u64 = r
            .flows
            .iter()
            .map(|f| f.ordering_refused_pool.unwrap())
            .sum();
        assert_eq!(per_flow, pool);
        // The layer's SACKs and NACKs are on the wire beside the ACKs.
        let c = s.control_bytes;
        assert!(c.sack > 0 && c.nack > 0 && c.ack > 0, "{c:?}");
        assert_eq!(
            s.control_overhead,
            c.total() as f64 / s.delivered_bytes as f64
        );
    }
}
