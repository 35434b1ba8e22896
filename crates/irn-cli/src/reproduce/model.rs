//! Experiments without a network: Eunomia's memory figures (Fig. 9 and Table 2), computed by
//! driving irn-core's ordering layer ([`OrderingLayer`]) and IRN's receiver in-process with a
//! seeded, synthetic arrival process.
//!
//! They enter `irn reproduce` as an [`Experiment`] whose [`Source`](crate::experiment::Source) is a [`Model`]: the engine
//! takes the model's results where it would read a run's `summary.json` (one JSON object per
//! point and variant) and checks them with the same verdicts. A model runs in well under a
//! second and is deterministic (fixed seeds), so it is simply recomputed each time: nothing is
//! written per run and nothing is resumed.
//!
//! # Fig. 9: memory per connection against the share of connections reordering
//!
//! Eunomia §4: 20 concurrent connections, 0–100 % of them facing reordering, the degree of
//! reordering 10–100 %; Eunomia (16-bit blocks, 256-bit cap) against a static 256-bit bitmap.
//! *Choices* (the paper does not give its arrival process): each connection carries one message
//! of [`PACKETS`] packets, the connections taking turns one packet at a time; a reordering
//! connection of degree `d` sends packet `i` to arrive at `i + u`, `u` uniform in
//! `[0, d × 256)` (so it arrives at most that many packets early), and a packet the layer drops
//! arrives again that many packets later (its retransmission). Each point averages the degrees
//! 10 %, 20 %, … 100 %. Memory is sampled after every round of arrivals, over the connections
//! still running: "bitmap bytes" is Fig. 9a's (the static bitmap's 32 B, Eunomia's blocks),
//! "bytes" Fig. 9b's, with each kind's state (the static bitmap's 9 B; Eunomia's 48 B record
//! once the connection reordered; its 4 B pointer is left out, as the paper's figure does).
//! The crossover is the share, interpolated between points, where Eunomia's bytes pass the
//! static bitmap's.
//!
//! # Table 2: memory and reordering handled per connection
//!
//! For each scheme, a fresh connection is fed one packet `k` ahead of the expected one, for
//! every `k`, and the farthest it keeps tells the packets it can track (the bitmap's span,
//! counting the expected packet's slot). Eunomia's memory is its footprint before any
//! reordering (the pointer alone) and once a packet at the farthest distance made it open its
//! record and every block. MP-RDMA is modelled by what Table 2 and the MP-RDMA paper give it, a
//! fixed 64-packet bitmap dropping beyond (irn's static-bitmap layer of 64 bits, its 8 B plus
//! 9 B of state). IRN is irn-core's IRN receiver: its bitmaps are sized at the BDP cap, five of
//! them per connection (IRN §6.1), each as wide as the span its receiver measurably tracks (the
//! BDP cap of 110 packets in a ring rounded up to 128 bits), with 160 bits of other state.

use anyhow::Result;
use irn_core::ordering::{MemoryController, OrderingConfig, OrderingLayer, OrderingMode};
use irn_core::{Ecn, Packet, PacketKind, Psn, Qpn, Receiver, Time, TransportConfig};
use irn_sim::scenario::{Expect, Metric};
use serde_json::json;

use super::{RunOutcome, Runs};
use crate::experiment::{Check, Experiment, Term};
use crate::plot::{self, BarGroup};
use crate::reproduce::verdict::Paper;

/// What a model's checks give as their window: they have none, and nothing to converge.
pub const WINDOW: &str = "model";

/// An experiment computed in-process from irn-core, without a network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Eunomia Fig. 9: memory per connection against the share of connections reordering.
    EunomiaFig09,
    /// Eunomia Table 2: memory and reordering handled per connection, by scheme.
    EunomiaTable2,
}

/// Concurrent connections (§4).
const CONNECTIONS: usize = 20;
/// Packets of each connection's message.
const PACKETS: u32 = 1000;
/// The degrees of reordering averaged at each point, in percent of the 256-bit cap.
const DEGREES: [u32; 10] = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
/// Fig. 9's variants.
const EUNOMIA: &str = "Eunomia";
const STATIC: &str = "static 256-bit";
/// Table 2's variants.
const IRN: &str = "IRN";
const MP_RDMA: &str = "MP-RDMA (64-bit bitmap)";
/// The keys of Fig. 9's results.
const FIG09_KEYS: &[&str] = &["bitmap_bytes", "bytes", "dropped", "share"];
/// The keys of Table 2's results.
const TABLE2_KEYS: &[&str] = &["memory_min_bytes", "memory_max_bytes", "trackable_packets"];
/// IRN §6.1: five BDP-sized bitmaps per queue pair...
const IRN_BITMAPS: u32 = 5;
/// ...and 160 bits of other per-QP state.
const IRN_OTHER_BYTES: u32 = 20;
const WHY: &str = "docs/reproduce-eunomia.md#memory-without-a-network-fig-9-and-table-2";

/// The shipped model experiments, in report order.
pub fn experiments() -> Result<Vec<Experiment>> {
    Ok(vec![fig09()?, table2()?])
}

fn term(variant: &str, point: Option<&str>, metric: &str, keys: &[&str]) -> Result<Term> {
    Ok(Term {
        variant: variant.to_string(),
        point: point.map(str::to_string),
        metric: Metric::among(metric, keys).map_err(anyhow::Error::msg)?,
    })
}

fn check(num: Term, den: Option<Term>, paper: Option<Paper>, claim: &str, expect: Expect) -> Check {
    Check {
        num,
        den,
        paper,
        paper_at: Vec::new(),
        claim: Some(claim.to_string()),
        why: Some(WHY.to_string()),
        expect,
        points: None,
    }
}

fn fig09() -> Result<Experiment> {
    let k = FIG09_KEYS;
    let points = (1..=10).map(|i| format!("{}%", i * 10)).collect();
    let checks = vec![
        check(
            term(STATIC, None, "bitmap_bytes", k)?,
            Some(term(EUNOMIA, None, "bitmap_bytes", k)?),
            None,
            "Eunomia consistently needs less bitmap memory than the static bitmap (§4, Fig. 9a)",
            Expect::Above,
        ),
        check(
            term(EUNOMIA, Some("crossover"), "share", k)?,
            None,
            Some(Paper::Value(0.6)),
            "with its 48 B of state per connection, Eunomia's memory passes the static \
             bitmap's as the share of reordering connections exceeds 60 % (§4, Fig. 9b)",
            Expect::AtLeast(0.5),
        ),
    ];
    Ok(Experiment::of_model(
        Model::EunomiaFig09,
        "eunomia-fig09",
        "Eunomia Fig. 9: memory per connection against the share of connections reordering (no network)",
        "20 connections; Eunomia (16-bit blocks, 256-bit cap) against a static 256-bit bitmap; \
         each point averages reorder degrees 10-100 %; computed from irn-core alone",
        points,
        checks,
    ))
}

fn table2() -> Result<Experiment> {
    let k = TABLE2_KEYS;
    let value = |variant, metric, paper: f64, claim, expect| -> Result<Check> {
        Ok(check(
            term(variant, None, metric, k)?,
            None,
            Some(Paper::Value(paper)),
            claim,
            expect,
        ))
    };
    let checks = vec![
        value(
            EUNOMIA,
            "memory_min_bytes",
            4.0,
            "Eunomia's memory per connection: 4 B without reordering (Table 2)",
            Expect::AtMost(8.0),
        )?,
        value(
            EUNOMIA,
            "memory_max_bytes",
            82.0,
            "Eunomia's memory per connection: at most 82 B (Table 2)",
            Expect::AtMost(100.0),
        )?,
        value(
            EUNOMIA,
            "trackable_packets",
            256.0,
            "Eunomia handles up to 256 packets out of order (Table 2)",
            Expect::AtLeast(200.0),
        )?,
        value(
            MP_RDMA,
            "memory_max_bytes",
            17.0,
            "MP-RDMA's bitmap memory: 17 B (Table 2)",
            Expect::AtMost(32.0),
        )?,
        value(
            MP_RDMA,
            "trackable_packets",
            64.0,
            "MP-RDMA handles 64 packets out of order (Table 2)",
            Expect::AtMost(64.0),
        )?,
        value(
            IRN,
            "memory_max_bytes",
            125.0,
            "IRN's bitmap memory: 125 B for 100 Gb/s links and an 8 us RTT (Table 2)",
            Expect::AtLeast(32.0),
        )?,
        value(
            IRN,
            "trackable_packets",
            100.0,
            "IRN handles 1 BDP out of order, 100 packets (Table 2)",
            Expect::AtLeast(64.0),
        )?,
        check(
            term(EUNOMIA, None, "trackable_packets", k)?,
            Some(term(MP_RDMA, None, "trackable_packets", k)?),
            Some(Paper::Value(4.0)),
            "Eunomia handles a higher degree of reordering than MP-RDMA: 256 against 64 \
             packets (§3.4.2, Table 2)",
            Expect::Above,
        ),
    ];
    Ok(Experiment::of_model(
        Model::EunomiaTable2,
        "eunomia-table2",
        "Eunomia Table 2: memory and reordering handled per connection (no network)",
        "each scheme's connection fed a packet k ahead of the expected one; computed from \
         irn-core alone",
        Vec::new(),
        checks,
    ))
}

/// The model's results, one per point and variant, as a run's would be.
pub(super) fn runs(model: Model) -> Result<Runs> {
    Ok(match model {
        Model::EunomiaFig09 => fig09_runs(),
        Model::EunomiaTable2 => table2_runs(),
    })
}

fn outcome(point: &str, variant: &str, summary: serde_json::Value) -> RunOutcome {
    RunOutcome {
        point: point.to_string(),
        seed: None,
        variant: variant.to_string(),
        dir: Default::default(),
        monitor_us: None,
        slides_unit_us: None,
        summary,
        single: Vec::new(),
    }
}

/// Fig. 9's points (10 %, 20 %, … 100 % of the connections reordering) for both variants, and
/// the crossover.
fn fig09_runs() -> Runs {
    let mut runs = Vec::new();
    // Eunomia's and the static bitmap's bytes at each share, 0 % included for the crossover.
    let mut totals: Vec<(f64, f64, f64)> = Vec::new();
    for tenths in 0..=10u32 {
        let reordering = (CONNECTIONS as u32 * tenths / 10) as usize;
        let point = format!("{}%", tenths * 10);
        let mut means = [(0.0, 0.0, 0.0); 2];
        for (v, mode) in [OrderingMode::Eunomia, OrderingMode::Static { bits: 256 }]
            .into_iter()
            .enumerate()
        {
            for degree in DEGREES {
                let m = memory_per_connection(mode, reordering, degree);
                means[v].0 += m.0 / DEGREES.len() as f64;
                means[v].1 += m.1 / DEGREES.len() as f64;
                means[v].2 += m.2 / DEGREES.len() as f64;
            }
        }
        totals.push((f64::from(tenths) / 10.0, means[0].1, means[1].1));
        if tenths == 0 {
            continue;
        }
        for (variant, (bitmap, bytes, dropped)) in [EUNOMIA, STATIC].into_iter().zip(means) {
            let summary = json!({ "bitmap_bytes": bitmap, "bytes": bytes, "dropped": dropped });
            runs.push(outcome(&point, variant, summary));
        }
    }
    let share = crossover(&totals);
    runs.push(outcome("crossover", EUNOMIA, json!({ "share": share })));
    runs
}

/// The share where Eunomia's bytes first pass the static bitmap's, interpolated linearly
/// between points; 1 (all connections) if they never do.
fn crossover(totals: &[(f64, f64, f64)]) -> f64 {
    for w in totals.windows(2) {
        let ((s0, e0, t0), (s1, e1, t1)) = (w[0], w[1]);
        let (d0, d1) = (e0 - t0, e1 - t1);
        if d0 <= 0.0 && d1 > 0.0 {
            return s0 + (s1 - s0) * (-d0) / (d1 - d0);
        }
    }
    1.0
}

/// A seeded generator for the arrival process (SplitMix64: small, fast, the same everywhere).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the bias of a modulo of 64 bits is negligible here).
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
}

/// One connection of the synthetic workload: its receiver, its layer and the PSNs still to
/// arrive, in arrival order.
struct Connection {
    receiver: Receiver,
    layer: OrderingLayer,
    mode: OrderingMode,
    arrivals: std::collections::VecDeque<u32>,
    /// How far a packet may arrive early, and how late a dropped one arrives again.
    spread: u32,
    done: bool,
}

impl Connection {
    fn new(i: usize, mode: OrderingMode, spread: u32, rng: &mut SplitMix) -> Self {
        let receiver = Receiver::new(TransportConfig::irn(), Qpn::new(i as u32), Psn::ZERO);
        let layer = OrderingLayer::new(mode, &receiver, &OrderingConfig::default());
        let mut keyed: Vec<(u32, u32)> = (0..PACKETS)
            .map(|psn| (psn + if spread > 1 { rng.below(spread) } else { 0 }, psn))
            .collect();
        keyed.sort_unstable();
        Connection {
            receiver,
            layer,
            mode,
            arrivals: keyed.into_iter().map(|(_, psn)| psn).collect(),
            spread,
            done: false,
        }
    }

    /// The next packet arrives; a dropped one is queued to arrive again `spread` later.
    fn step(&mut self, now: Time, pool: &mut MemoryController) {
        let Some(psn) = self.arrivals.pop_front() else {
            return;
        };
        let pkt = data(psn, psn == PACKETS - 1);
        let pool = (self.mode == OrderingMode::Eunomia).then_some(pool);
        self.layer
            .handle_packet(now, &pkt, &mut self.receiver, pool);
        while let Some(reply) = self.layer.poll_transmit(now, &mut self.receiver) {
            if matches!(reply.kind, PacketKind::DropNack { dropped, .. } if dropped == pkt.psn) {
                let at = (self.spread as usize).min(self.arrivals.len());
                self.arrivals.insert(at, psn);
            }
        }
        self.done = self.receiver.poll_completion().is_some();
    }
}

/// Mean bitmap bytes and bytes per running connection, and packets dropped per connection,
/// over one workload: `reordering` of the connections reorder with `degree` % of the cap.
fn memory_per_connection(mode: OrderingMode, reordering: usize, degree: u32) -> (f64, f64, f64) {
    let cfg = OrderingConfig::default();
    let mut pool = MemoryController::new(cfg).expect("the default configuration is valid");
    let mut rng = SplitMix(u64::from(degree) << 32 | reordering as u64);
    let spread = cfg.cap_bits * degree / 100;
    let mut conns: Vec<Connection> = (0..CONNECTIONS)
        .map(|i| Connection::new(i, mode, if i < reordering { spread } else { 1 }, &mut rng))
        .collect();
    let (mut bitmap, mut bytes, mut samples) = (0u64, 0u64, 0u64);
    let mut round = 0u64;
    while conns.iter().any(|c| !c.done) {
        round += 1;
        let now = Time::from_ps(round * 1_000_000);
        for c in conns.iter_mut().filter(|c| !c.done) {
            c.step(now, &mut pool);
            if c.done {
                c.layer.release(Some(&mut pool));
            }
        }
        for c in conns.iter().filter(|c| !c.done) {
            bitmap += u64::from(c.layer.bitmap_bytes());
            // The pointer every Eunomia connection has is left out, as Fig. 9b leaves it.
            let pointer = match mode {
                OrderingMode::Eunomia => OrderingConfig::DBA_BYTES,
                _ => 0,
            };
            bytes += u64::from(c.layer.footprint_bytes() - pointer);
            samples += 1;
        }
    }
    let dropped: u64 = conns.iter().map(|c| c.layer.stats().dropped).sum();
    let n = samples.max(1) as f64;
    (
        bitmap as f64 / n,
        bytes as f64 / n,
        dropped as f64 / CONNECTIONS as f64,
    )
}

/// Table 2's three schemes, measured.
fn table2_runs() -> Runs {
    let cfg = OrderingConfig::default();
    let eunomia = farthest_layer(OrderingMode::Eunomia);
    let mp = farthest_layer(OrderingMode::Static { bits: 64 });
    // Each of IRN's bitmaps spans what its receiver tracks.
    let irn_tracked = farthest_irn() + 1;
    let irn_bitmap = IRN_BITMAPS * irn_tracked.div_ceil(8);
    vec![
        outcome(
            "",
            IRN,
            json!({
                "memory_min_bytes": irn_bitmap,
                "memory_max_bytes": irn_bitmap,
                "trackable_packets": irn_tracked,
                "other_bytes": IRN_OTHER_BYTES,
            }),
        ),
        outcome(
            "",
            MP_RDMA,
            json!({
                "memory_min_bytes": mp.0,
                "memory_max_bytes": mp.1,
                "trackable_packets": mp.2 + 1,
            }),
        ),
        outcome(
            "",
            EUNOMIA,
            json!({
                "memory_min_bytes": eunomia.0,
                "memory_max_bytes": eunomia.1,
                "trackable_packets": eunomia.2 + 1,
                "other_bytes": 0,
                "record_bytes": cfg.metadata_bytes(),
            }),
        ),
    ]
}

/// For an ordering layer: its footprint fresh, its footprint after the farthest packet it
/// keeps, and how far ahead that packet is (each distance tried on a fresh connection).
fn farthest_layer(mode: OrderingMode) -> (u32, u32, u32) {
    let cfg = OrderingConfig::default();
    let receiver = || Receiver::new(TransportConfig::irn(), Qpn::new(1), Psn::ZERO);
    let min = OrderingLayer::new(mode, &receiver(), &cfg).footprint_bytes();
    let (mut farthest, mut max) = (0, min);
    for ahead in 1..=4 * cfg.cap_bits {
        let mut pool = MemoryController::new(cfg).expect("the default configuration is valid");
        let mut receiver = receiver();
        let mut layer = OrderingLayer::new(mode, &receiver, &cfg);
        let pool = (mode == OrderingMode::Eunomia).then_some(&mut pool);
        layer.handle_packet(Time::ZERO, &data(ahead, false), &mut receiver, pool);
        if layer.stats().held == 1 {
            (farthest, max) = (ahead, layer.footprint_bytes());
        }
    }
    (min, max, farthest)
}

/// How far ahead of the expected packet irn-core's IRN receiver keeps a packet.
fn farthest_irn() -> u32 {
    let cfg = TransportConfig::irn();
    (1..=4 * cfg.window())
        .filter(|&ahead| {
            let mut receiver = Receiver::new(cfg, Qpn::new(1), Psn::ZERO);
            receiver.handle_packet(Time::ZERO, &data(ahead, false));
            let st = receiver.stats();
            st.window_drops == 0 && st.invalid_packets == 0
        })
        .max()
        .unwrap_or(0)
}

/// A full data packet (IRN's MTU) with PSN `psn`, its message's last or not.
fn data(psn: u32, last: bool) -> Packet {
    Packet {
        dest_qp: Qpn::new(1),
        psn: Psn::new(psn),
        kind: PacketKind::Data {
            payload_len: TransportConfig::irn().mtu as u16,
            first: psn == 0,
            last,
            retransmission: false,
            ecn: Ecn::Ect0,
            ts: 0,
            entropy: 0,
        },
    }
}

/// The figure in the paper's form: Fig. 9a and 9b as lines against the share of connections
/// reordering; Table 2 as bars and a table.
pub(super) fn chart(model: Model, exp: &Experiment, runs: &Runs) -> Result<String> {
    let value = |point: &str, variant: &str, key: &str| {
        runs.iter()
            .find(|r| r.point == point && r.variant == variant)
            .and_then(|r| r.summary.get(key)?.as_f64())
    };
    match model {
        Model::EunomiaFig09 => {
            let line = |variant: &str, key: &str, label: &str| -> plot::ErrorBarLine {
                let points = (exp.points.iter())
                    .filter_map(|(p, _)| {
                        let share = p.trim_end_matches('%').parse::<f64>().ok()?;
                        Some((share, value(p, variant, key)?, None))
                    })
                    .collect();
                (label.to_string(), points)
            };
            let x = "connections reordering (%)";
            let mut svg = plot::error_bar_lines(
                "Fig. 9a: bitmap memory per connection",
                x,
                "bytes",
                &[
                    line(EUNOMIA, "bitmap_bytes", "Eunomia"),
                    line(STATIC, "bitmap_bytes", "static 256-bit"),
                ],
            )?;
            svg.push_str(&plot::error_bar_lines(
                "Fig. 9b: with each connection's state (Eunomia 48 B, static 9 B)",
                x,
                "bytes",
                &[
                    line(EUNOMIA, "bytes", "Eunomia"),
                    line(STATIC, "bytes", "static 256-bit"),
                ],
            )?);
            Ok(svg)
        }
        Model::EunomiaTable2 => {
            let variants = [IRN, MP_RDMA, EUNOMIA];
            let groups = [
                ("memory per connection, most (B)", "memory_max_bytes"),
                ("packets tracked out of order", "trackable_packets"),
            ];
            let groups: Vec<BarGroup> = groups
                .iter()
                .map(|(label, key)| BarGroup {
                    label,
                    values: variants.iter().map(|v| value("", v, key)).collect(),
                    format: |v| plot::fmt_sig(v, 3),
                })
                .collect();
            let mut html = plot::grouped_bars(&exp.title, &variants, &groups)?;
            html.push_str(&table2_html(&value));
            Ok(html)
        }
    }
}

/// Table 2 as the paper lays it out, irn's values beside the paper's.
fn table2_html(value: &dyn Fn(&str, &str, &str) -> Option<f64>) -> String {
    let paper = [
        (IRN, "125 B", "20 B", "100 (1 BDP)"),
        (MP_RDMA, "17 B", "49 B", "64"),
        (EUNOMIA, "4-82 B", "0 B", "0-256"),
    ];
    let n = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| plot::fmt_sig(v, 3));
    let mut h = String::from(
        "<table><tr><th>scheme</th><th>memory (paper)</th><th>memory (irn)</th>\
         <th>other data (paper)</th><th>other data (irn)</th>\
         <th>out of order (paper)</th><th>out of order (irn)</th></tr>",
    );
    for (scheme, memory, other, ooo) in paper {
        let (lo, hi) = (
            value("", scheme, "memory_min_bytes"),
            value("", scheme, "memory_max_bytes"),
        );
        let memory_irn = if lo == hi {
            format!("{} B", n(hi))
        } else {
            format!("{}-{} B", n(lo), n(hi))
        };
        let other_irn = value("", scheme, "other_bytes").map_or_else(
            || "not modelled".to_string(),
            |v| format!("{} B", n(Some(v))),
        );
        let ooo_irn = n(value("", scheme, "trackable_packets"));
        h.push_str(&format!(
            "<tr><td>{scheme}</td><td>{memory}</td><td>{memory_irn}</td><td>{other}</td>\
             <td>{other_irn}</td><td>{ooo}</td><td>{ooo_irn}</td></tr>"
        ));
    }
    h.push_str("</table>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The static bitmap costs its 32 B and 9 B of state whatever the reordering; Eunomia's
    /// bitmap costs less, and with its record more at the highest degree; the same seed gives
    /// the same numbers.
    #[test]
    fn fig09_workloads_cost_what_each_layer_holds() {
        for degree in [10, 100] {
            let stat = memory_per_connection(OrderingMode::Static { bits: 256 }, 20, degree);
            assert_eq!(stat, (32.0, 41.0, 0.0), "degree {degree}");
            let eunomia = memory_per_connection(OrderingMode::Eunomia, 20, degree);
            assert!(
                eunomia.0 > 0.0 && eunomia.0 < 32.0,
                "degree {degree}: {eunomia:?}"
            );
            // The record, from each reordering connection's first early packet on.
            let record = eunomia.1 - eunomia.0;
            assert!((47.0..=48.0).contains(&record), "degree {degree}: {record}");
            assert_eq!(
                eunomia,
                memory_per_connection(OrderingMode::Eunomia, 20, degree)
            );
        }
        // Without reordering, Eunomia holds nothing.
        let none = memory_per_connection(OrderingMode::Eunomia, 0, 50);
        assert_eq!(none, (0.0, 0.0, 0.0));
    }

    #[test]
    fn table2_measures_each_scheme() {
        let runs = table2_runs();
        let get = |variant: &str, key: &str| {
            let r = runs
                .iter()
                .find(|r| r.variant == variant)
                .expect("a variant");
            r.summary[key].as_f64().expect("a number")
        };
        // Eunomia: the pointer alone, then pointer + record + 16 blocks; 256 bits.
        assert_eq!(get(EUNOMIA, "memory_min_bytes"), 4.0);
        assert_eq!(get(EUNOMIA, "memory_max_bytes"), 4.0 + 48.0 + 32.0);
        assert_eq!(get(EUNOMIA, "trackable_packets"), 256.0);
        // A 64-bit static bitmap: 8 B + 9 B of state, 64 packets.
        assert_eq!(get(MP_RDMA, "memory_max_bytes"), 17.0);
        assert_eq!(get(MP_RDMA, "trackable_packets"), 64.0);
        // IRN's receiver tracks its BDP cap, in a ring of the next power of two.
        let ring = TransportConfig::irn().window().next_power_of_two();
        assert_eq!(get(IRN, "trackable_packets"), f64::from(ring));
        assert_eq!(get(IRN, "memory_max_bytes"), f64::from(5 * ring / 8));
    }

    #[test]
    fn the_crossover_is_interpolated() {
        let totals = [(0.0, 0.0, 41.0), (0.5, 30.0, 41.0), (1.0, 60.0, 41.0)];
        assert!((crossover(&totals) - (0.5 + 0.5 * 11.0 / 30.0)).abs() < 1e-12);
        assert_eq!(crossover(&[(0.0, 0.0, 41.0), (1.0, 40.0, 41.0)]), 1.0);
    }
}
