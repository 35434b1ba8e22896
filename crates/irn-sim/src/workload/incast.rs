//! Incast: many senders answer one receiver at the same instant (IRN §4.4.3).
//!
//! This is the pattern of a striped read from distributed storage: a request for `total_bytes`
//! is served in equal parts by M servers at once, and the request completes when the last part
//! arrives. It stresses the receiver's downlink and, with PFC, spreads pauses back into the
//! fabric.

use irn_core::time::Time;
use rand::Rng;

use super::{FlowClass, FlowSpec, WorkloadError};
use crate::ids::HostIdx;
use crate::rng::{stream, Purpose};

/// Incast (IRN §4.4.3): `total_bytes` striped over `senders` distinct random hosts (not the
/// receiver), all starting at `start`, to one receiver.
///
/// Stripe sizes differ by at most one byte (the first `total_bytes % senders` senders, in host
/// order, carry one extra byte). The senders are chosen uniformly at random from
/// `stream(seed, Incast, 0)`; repetitions of an experiment use different seeds. The flows are
/// returned in increasing sender order.
///
/// Errors if `senders` is 0 or not less than `hosts` (the receiver cannot send to itself), if
/// `receiver` is not one of the `hosts`, or if `total_bytes < senders` (a sender would have
/// nothing to send).
pub fn incast(
    hosts: u32,
    receiver: HostIdx,
    senders: u32,
    total_bytes: u64,
    start: Time,
    seed: u64,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    if receiver.0 >= hosts {
        return Err(WorkloadError::Incast(format!(
            "receiver {receiver} is not a host: there are {hosts} hosts"
        )));
    }
    if senders == 0 || senders >= hosts {
        return Err(WorkloadError::Incast(format!(
            "{senders} senders requested; with {hosts} hosts the number of senders must be \
             between 1 and {} (every host but the receiver)",
            hosts.saturating_sub(1)
        )));
    }
    if total_bytes < u64::from(senders) {
        return Err(WorkloadError::Incast(format!(
            "{total_bytes} bytes cannot be striped over {senders} senders: each needs at least \
             one byte"
        )));
    }

    // Partial Fisher–Yates over every host but the receiver: the first `senders` entries end up
    // a uniformly random subset.
    let mut rng = stream(seed, Purpose::Incast, 0);
    let mut pool: Vec<u32> = (0..hosts).filter(|&h| h != receiver.0).collect();
    let m = senders as usize;
    for i in 0..m {
        let j = rng.random_range(i..pool.len());
        pool.swap(i, j);
    }
    pool.truncate(m);
    pool.sort_unstable();

    Ok(pool
        .into_iter()
        .enumerate()
        .map(|(k, src)| FlowSpec {
            src: HostIdx(src),
            dst: receiver,
            size_bytes: stripe(total_bytes, u64::from(senders), k as u64),
            start,
            class: FlowClass::Incast,
            verb: None,
        })
        .collect())
}

/// Each of `flows` as `per_flow` flows between the same hosts, starting together, its bytes
/// split as evenly as a stripe (the first `size % per_flow` one byte larger): an incast of many
/// flows per sender, as RPC servers answer many requests over their own connections at once.
/// The flows of one sender stay together, in the order given. `per_flow` is at least 1 and
/// at most each flow's size (every flow keeps at least a byte).
pub fn split(flows: Vec<FlowSpec>, per_flow: u32) -> Vec<FlowSpec> {
    let k = u64::from(per_flow.max(1));
    flows
        .into_iter()
        .flat_map(|f| {
            (0..k).map(move |i| FlowSpec {
                size_bytes: stripe(f.size_bytes, k, i),
                ..f
            })
        })
        .collect()
}

/// Stripe `i` of `total` bytes split `n` ways as evenly as whole bytes allow: the first
/// `total % n` stripes one byte larger.
fn stripe(total: u64, n: u64, i: u64) -> u64 {
    total / n + u64::from(i < total % n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_each_senders_bytes_in_even_flows() {
        let flows = incast(5, HostIdx(0), 2, 21, Time::ZERO, 1).unwrap();
        // 21 bytes over 2 senders: 11 and 10; each in 3 flows: 4, 4, 3 and 4, 3, 3.
        let split = split(flows.clone(), 3);
        let sizes: Vec<u64> = split.iter().map(|f| f.size_bytes).collect();
        assert_eq!(sizes, [4, 4, 3, 4, 3, 3]);
        assert!(split[..3].iter().all(|f| f.src == flows[0].src));
        assert!(split[3..].iter().all(|f| f.src == flows[1].src));
        assert!(split
            .iter()
            .all(|f| f.dst == HostIdx(0) && f.start == Time::ZERO));
        // One flow per sender changes nothing.
        assert_eq!(
            format!("{:?}", super::split(flows.clone(), 1)),
            format!("{flows:?}")
        );
    }

    #[test]
    fn stripes_sum_to_the_total_over_distinct_senders() {
        let start = Time::from_ps(5_000_000);
        for (hosts, receiver, m, total) in [
            (54u32, 3u32, 10u32, 150_000_000u64),
            (54, 0, 53, 150_000_003),
            (128, 127, 50, 1_000_001),
            (2, 1, 1, 1),
        ] {
            let flows = incast(hosts, HostIdx(receiver), m, total, start, 11).unwrap();
            assert_eq!(flows.len(), m as usize);
            assert_eq!(flows.iter().map(|f| f.size_bytes).sum::<u64>(), total);
            let (lo, hi) = flows.iter().fold((u64::MAX, 0), |(lo, hi), f| {
                (lo.min(f.size_bytes), hi.max(f.size_bytes))
            });
            assert!(hi - lo <= 1, "stripes {lo}..{hi}");
            let mut srcs: Vec<u32> = flows.iter().map(|f| f.src.0).collect();
            srcs.dedup();
            assert_eq!(srcs.len(), m as usize, "senders are not distinct");
            for f in &flows {
                assert_ne!(f.src, HostIdx(receiver));
                assert!(f.src.0 < hosts);
                assert_eq!(f.dst, HostIdx(receiver));
                assert_eq!(f.start, start);
            }
        }
    }

    #[test]
    fn sender_choice_is_seeded() {
        let pick = |seed| {
            incast(54, HostIdx(0), 10, 150_000_000, Time::ZERO, seed)
                .unwrap()
                .iter()
                .map(|f| f.src)
                .collect::<Vec<_>>()
        };
        assert_eq!(pick(1), pick(1));
        assert_ne!(pick(1), pick(2));
    }

    #[test]
    fn impossible_requests_are_errors() {
        let r = HostIdx(0);
        for (hosts, receiver, m, total) in [
            (10, r, 0, 100),
            (10, r, 10, 100),
            (10, r, 11, 100),
            (10, HostIdx(10), 3, 100),
            (10, r, 5, 4),
        ] {
            let res = incast(hosts, receiver, m, total, Time::ZERO, 0);
            assert!(
                matches!(res, Err(WorkloadError::Incast(_))),
                "{hosts} {receiver} {m} {total}"
            );
        }
    }
}
