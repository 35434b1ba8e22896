//! Throughput of the four NIC packet-processing modules of IRN §6.2, plus the bitmap primitives
//! they are built from.
//!
//! IRN synthesised each module for an FPGA and reported (Table 2) how many events per second one
//! instance handles; the benchmarks here measure the same events in software, one core, driving
//! the sans-IO state machines directly (no simulator, no encoding). Every benchmark reports
//! elements per second through [`Throughput::Elements`]; what counts as one element is given
//! below and in each function's comment.
//!
//! | group | IRN module (FPGA, Table 2) | what one element is |
//! | --- | --- | --- |
//! | `receiveData` | receiveData, 45.45 Mpps | one data packet: [`Receiver::handle_packet`], then draining the ACK/NACK from `poll_transmit` and any completion from `poll_completion` |
//! | `txFree` | txFree, 47.17 Mpps | one data packet out of [`Sender::poll_transmit`] |
//! | `receiveAck` | receiveAck, 46.99 Mpps | one ACK/NACK into [`Sender::handle_packet`] (plus draining completions) |
//! | `timeout` | timeout, 318.47 Mpps | one [`Sender::handle_timeout`] call at (or before) the deadline |
//! | `bitmap` | the find-first-zero / popcount / shift blocks inside the above | one [`RingBitmap`] operation on a 128-bit (BDP cap 110) bitmap |
//! | `ordering` | Eunomia's receiver-side agent + HD bitmap + memory controller (FPGA module, Eunomia §4), over IRN's receiver | one data packet: [`OrderedReceiver::handle_packet`], then draining its ACK/SACK/NACK from `poll_transmit` and any completion from `poll_completion` |
//!
//! The benchmarks:
//!
//! - `receiveData/in_order/{irn,roce}`: an endless in-order stream of 4-packet messages (three
//!   full-MTU packets and a 512-byte last one), so every packet is ACKed and every fourth
//!   completes a message. The receiver keeps its state across iterations and the PSN keeps
//!   growing (wrapping at 2^24). 64 packets per iteration.
//! - `receiveData/out_of_order{,_stride37,_lost_head}/irn`: the same stream, but each window of 64
//!   packets arrives permuted: reversed (63 out-of-order arrivals, each setting a bit and
//!   producing a NACK, then one in-order arrival that finds the first zero 64 bits on, counts
//!   16 message ends and shifts both bitmaps by 64); in the order `i * 37 mod 64` (holes filled
//!   in a scattered order, many short advances); or with the window's first packet arriving last
//!   (one loss repaired by a retransmission: the common IRN case). 64 packets per iteration.
//! - `txFree/new_packets/irn`: the in-sequence path with BDP-FC at the default cap of 110. The
//!   sender is kept from stalling by a cumulative ACK after every 64 transmits; elements count
//!   only the 64 transmits, but the time includes that one ACK (about 1/64 of a `receiveAck/ack`
//!   per element) and, every 2^21 packets, posting the next message.
//! - `txFree/recovery_lookahead/irn`: a sender in loss recovery after 110 packets went out and
//!   NACKs (cumulative ACK = first PSN) SACKed every odd packet. Draining it yields 55
//!   retransmissions: the cumulative-ACK packet, then 54 holes each found by a look-ahead
//!   find-first-zero over the SACK bitmap; the final `None` poll (which skips the rest of the
//!   SACKed range) is included. Set-up is untimed (`iter_batched_ref`); elements = 55.
//! - `receiveAck/ack/{irn,roce}`: 110 packets in flight; 110 cumulative ACKs each advancing by
//!   one (shifting the SACK bitmap, re-arming the timer; the last completes the message).
//!   Set-up untimed; elements = 110.
//! - `receiveAck/nack/irn`: 110 packets in flight, the first lost; 109 NACKs (cumulative ACK =
//!   the lost PSN) SACKing packets 1..=109. The first enters recovery, each sets a SACK bit.
//!   Set-up untimed; elements = 109.
//! - `timeout/fire/irn`: 2 packets in flight (≤ N = 3), so every RTO_low expiry fires: loss
//!   recovery restarts and the timer is re-armed. State kept across iterations.
//! - `timeout/extend/irn`: 110 packets in flight (> N): RTO_low expiry only extends the timer
//!   to RTO_high. Each iteration works on a fresh clone (untimed), since an extension happens
//!   once per arming.
//! - `timeout/extend_or_fire/irn`: 110 in flight, calling at each successive deadline: the
//!   calls alternate between an RTO_low extension and the RTO_high expiry that follows it.
//! - `timeout/not_due/irn`: a call one picosecond before the deadline (the early return a driver
//!   pays when it polls the timer more often than it expires).
//! - `timeout/fire/roce`: RoCE without PFC, fixed RTO_high: each expiry rewinds go-back-N.
//! - `bitmap/*`: a 128-bit bitmap whose head has been advanced off a word boundary (so windows
//!   straddle words) holding receiver-like contents: `first_zero` over the whole window finding
//!   the end of a 70-packet run (receiveData's next expected PSN), `first_zero_lookahead` from
//!   successive odd offsets in an every-other-bit pattern (txFree's hole search), `count_ones`
//!   over the window with every fourth bit set (message ends passed, receiveData), `advance` by
//!   1 (receiveAck) and by 64 (a repaired hole in receiveData), and `set` at scattered offsets.
//! - `ordering/in_order/eunomia`: an endless in-order stream of full-MTU packets (no message
//!   ends) on one connection with the default configuration (16-bit blocks, 256-bit cap): each
//!   packet goes through the layer to IRN's receiver and is ACKed, and no bitmap is ever opened.
//!   64 packets per iteration. The layer's own cost is this minus `receiveData/in_order/irn`.
//! - `ordering/out_of_order{,_stride37,_lost_head}/eunomia`: the same stream with each window of
//!   64 packets permuted as in `receiveData` (reversed: 63 SACKs, then one arrival that hands
//!   the 64-packet run to the transport, which answers with one ACK). The first window grows
//!   the bitmap to four blocks and absorbs them into one 64-bit ring; later windows reuse it.
//!   64 packets per iteration.
//! - `ordering/connection_reversed/eunomia`: a whole 64-packet message arriving reversed on a
//!   fresh connection: opening the bitmap, four blocks from the pool, 63 SACKs, the run handed
//!   over, the completion and the garbage collection. Building the connection (a receiver and
//!   its layer, which allocate their queues) is timed too. 64 packets per iteration.
//!
//! Run with `cargo bench -p irn-core --bench modules`; each benchmark measures for about 2 s
//! after a 0.5 s warm-up (about a minute in all).

use std::hint::black_box;
use std::time::Duration as StdDuration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use irn_core::ordering::{MemoryController, OrderedReceiver, OrderingConfig, OrderingMode};
use irn_core::packet::{Echo, Ecn, Packet, PacketKind, Qpn};
use irn_core::{Psn, Receiver, RingBitmap, Sender, Time, TransportConfig};

// ----- packet helpers (in the spirit of tests/common, which benches cannot import) -----

const SENDER_QP: Qpn = Qpn::new(0x11);
const RECEIVER_QP: Qpn = Qpn::new(0x22);
const MTU: u32 = TransportConfig::DEFAULT_MTU;
/// Close to the wrap, so every stream crosses from 0xFF_FFFF to 0 early on.
const ISN: Psn = Psn::new(0xFF_FFC0);
/// The receivers and senders here never look at the clock except to arm timers.
const NOW: Time = Time::ZERO;
/// Packets per message in the receiveData streams.
const MSG_PACKETS: u64 = 4;
const LAST_LEN: u16 = 512;
/// Packets per iteration in the receiveData and txFree/new_packets benchmarks.
const BATCH: u64 = 64;
/// IRN's default BDP cap (§4.1): the window every sender-side scenario fills.
const WINDOW: u32 = TransportConfig::DEFAULT_BDP_CAP;

fn data(psn: Psn, payload_len: u16, first: bool, last: bool) -> Packet {
    Packet {
        dest_qp: RECEIVER_QP,
        psn,
        kind: PacketKind::Data {
            payload_len,
            first,
            last,
            retransmission: false,
            ecn: Ecn::Ect0,
            ts: 0,
            entropy: 0,
        },
    }
}

fn ack(cumulative: Psn) -> Packet {
    Packet {
        dest_qp: SENDER_QP,
        psn: cumulative,
        kind: PacketKind::Ack {
            msn: 0,
            echo: Echo::default(),
        },
    }
}

fn nack(cumulative: Psn, sack: Psn) -> Packet {
    Packet {
        dest_qp: SENDER_QP,
        psn: cumulative,
        kind: PacketKind::Nack {
            msn: 0,
            sack,
            echo: Echo::default(),
        },
    }
}

/// Packet number `n` (counted from [`ISN`]) of an endless stream of [`MSG_PACKETS`]-packet
/// messages.
fn stream_packet(n: u64) -> Packet {
    let pos = n % MSG_PACKETS;
    let last = pos == MSG_PACKETS - 1;
    let len = if last { LAST_LEN } else { MTU as u16 };
    // Truncating is exact: 2^24 divides 2^32.
    data(ISN.add(n as u32), len, pos == 0, last)
}

fn receiver(cfg: TransportConfig) -> Receiver {
    Receiver::new(cfg, SENDER_QP, ISN)
}

fn sender(cfg: TransportConfig) -> Sender {
    Sender::new(cfg, RECEIVER_QP, ISN)
}

fn psn(n: u64) -> Psn {
    ISN.add(n as u32)
}

/// One receiveData event: the packet in, its ACK/NACK and any completion out.
#[inline(always)]
fn receive(rx: &mut Receiver, pkt: &Packet) {
    rx.handle_packet(NOW, black_box(pkt));
    while let Some(p) = rx.poll_transmit(NOW) {
        black_box(p);
    }
    while let Some(c) = rx.poll_completion() {
        black_box(c);
    }
}

/// A sender that has sent a whole `packets`-packet message and heard nothing back yet.
fn sender_with_in_flight(cfg: TransportConfig, packets: u32) -> Sender {
    let mut s = sender(cfg);
    s.post(u64::from(packets) * u64::from(MTU)).unwrap();
    for _ in 0..packets {
        s.poll_transmit(NOW)
            .expect("window allows the whole message");
    }
    assert!(s.poll_transmit(NOW).is_none());
    assert_eq!(s.in_flight(), u64::from(packets));
    s
}

/// Short runs: every benchmark here is a tight loop that settles within a second.
fn config() -> Criterion {
    Criterion::default()
        .measurement_time(StdDuration::from_secs(2))
        .warm_up_time(StdDuration::from_millis(500))
}

// ----- receiveData -----

/// Arrival orders of one 64-packet window, as offsets from the window's first packet.
fn reversed() -> [u64; BATCH as usize] {
    std::array::from_fn(|i| BATCH - 1 - i as u64)
}

fn stride37() -> [u64; BATCH as usize] {
    std::array::from_fn(|i| (i as u64 * 37) % BATCH)
}

fn lost_head() -> [u64; BATCH as usize] {
    std::array::from_fn(|i| (i as u64 + 1) % BATCH)
}

/// Feeds windows of the stream in `order` to a fresh IRN receiver and checks it ends each window
/// caught up, having NACKed every out-of-order arrival.
fn check_permuted(order: &[u64; BATCH as usize]) {
    let mut rx = receiver(TransportConfig::irn());
    let mut base = 0;
    for _ in 0..3 {
        for &off in order {
            receive(&mut rx, &stream_packet(base + off));
        }
        base += BATCH;
        assert_eq!(rx.expected_psn(), psn(base));
    }
    let st = rx.stats();
    assert_eq!(st.packets_accepted, 3 * BATCH);
    assert_eq!(st.nacks_sent, st.out_of_order);
    assert_eq!(st.acks_sent + st.nacks_sent, 3 * BATCH);
}

fn receive_data(c: &mut Criterion) {
    for order in [reversed(), stride37(), lost_head()] {
        check_permuted(&order);
    }
    // Reversed: 63 NACKs and one ACK per window.
    let mut rx = receiver(TransportConfig::irn());
    for &off in &reversed() {
        receive(&mut rx, &stream_packet(off));
    }
    assert_eq!((rx.stats().nacks_sent, rx.stats().acks_sent), (63, 1));

    let mut g = c.benchmark_group("receiveData");
    g.throughput(Throughput::Elements(BATCH));

    for (name, cfg) in [
        ("irn", TransportConfig::irn()),
        ("roce", TransportConfig::roce(true)),
    ] {
        g.bench_function(BenchmarkId::new("in_order", name), |b| {
            let mut rx = receiver(cfg);
            let mut next = 0u64;
            b.iter(|| {
                for _ in 0..BATCH {
                    receive(&mut rx, &stream_packet(next));
                    next += 1;
                }
            });
            assert_eq!(rx.expected_psn(), psn(next));
        });
    }

    for (name, order) in [
        ("out_of_order", reversed()),
        ("out_of_order_stride37", stride37()),
        ("out_of_order_lost_head", lost_head()),
    ] {
        g.bench_function(BenchmarkId::new(name, "irn"), |b| {
            let mut rx = receiver(TransportConfig::irn());
            let mut base = 0u64;
            b.iter(|| {
                for &off in &order {
                    receive(&mut rx, &stream_packet(base + off));
                }
                base += BATCH;
            });
            assert_eq!(rx.expected_psn(), psn(base));
            assert_eq!(rx.stats().window_drops + rx.stats().invalid_packets, 0);
        });
    }
    g.finish();
}

// ----- txFree -----

/// Packets per posted message in `txFree/new_packets`: a multiple of [`BATCH`], and small enough
/// that the next message can be posted while a few packets of the last are unacknowledged.
const BIG_MESSAGE_PACKETS: u64 = 1 << 21;

/// A sender as in `receiveAck/nack` after the NACKs: in recovery, every odd packet SACKed.
fn sender_in_lookahead_recovery() -> Sender {
    let mut s = sender_with_in_flight(TransportConfig::irn(), WINDOW);
    for k in (1..u64::from(WINDOW)).step_by(2) {
        s.handle_packet(NOW, &nack(psn(0), psn(k)));
    }
    assert!(s.in_recovery());
    s
}

/// Retransmissions `txFree/recovery_lookahead` yields per batch: packet 0, then the 54 even holes.
const LOOKAHEAD_RETX: u64 = 1 + (WINDOW as u64 - 2) / 2;

fn tx_free(c: &mut Criterion) {
    {
        let mut s = sender_in_lookahead_recovery();
        let mut sent = Vec::new();
        while let Some(p) = s.poll_transmit(NOW) {
            sent.push(p.psn);
        }
        let want: Vec<Psn> = std::iter::once(0)
            .chain((2..u64::from(WINDOW)).step_by(2))
            .map(psn)
            .collect();
        assert_eq!(sent, want);
        assert_eq!(sent.len() as u64, LOOKAHEAD_RETX);
        assert_eq!(s.stats().retransmissions, LOOKAHEAD_RETX);
    }

    let mut g = c.benchmark_group("txFree");

    // Elements: the 64 transmits per iteration. Timed alongside them: one cumulative ACK per 64
    // transmits, and one `post` per 2^21.
    g.throughput(Throughput::Elements(BATCH));
    g.bench_function(BenchmarkId::new("new_packets", "irn"), |b| {
        let mut s = sender(TransportConfig::irn());
        s.post(BIG_MESSAGE_PACKETS * u64::from(MTU)).unwrap();
        let mut acked = 0u64;
        b.iter(|| {
            for _ in 0..BATCH {
                black_box(s.poll_transmit(NOW));
            }
            acked += BATCH;
            s.handle_packet(NOW, black_box(&ack(psn(acked))));
            while let Some(c) = s.poll_completion() {
                black_box(c);
            }
            if s.is_idle() {
                s.post(BIG_MESSAGE_PACKETS * u64::from(MTU)).unwrap();
            }
        });
        // Nothing stalled: every poll produced a packet, each ACK covered exactly what was sent.
        assert_eq!(s.stats().packets_sent, acked);
        assert_eq!(s.stats().retransmissions + s.stats().invalid_packets, 0);
    });

    g.throughput(Throughput::Elements(LOOKAHEAD_RETX));
    g.bench_function(BenchmarkId::new("recovery_lookahead", "irn"), |b| {
        b.iter_batched_ref(
            sender_in_lookahead_recovery,
            |s| {
                while let Some(p) = s.poll_transmit(NOW) {
                    black_box(p);
                }
            },
            BatchSize::SmallInput,
        );
    });
    g.finish();
}

// ----- receiveAck -----

fn receive_ack(c: &mut Criterion) {
    let window = u64::from(WINDOW);
    {
        let mut s = sender_with_in_flight(TransportConfig::irn(), WINDOW);
        for k in 1..=window {
            s.handle_packet(NOW, &ack(psn(k)));
        }
        assert!(s.is_idle() && s.poll_completion().is_some() && s.poll_timeout().is_none());
        let mut s = sender_with_in_flight(TransportConfig::irn(), WINDOW);
        for k in 1..window {
            s.handle_packet(NOW, &nack(psn(0), psn(k)));
        }
        assert!(s.in_recovery());
        assert_eq!(s.stats().nacks_received, window - 1);
        assert_eq!(s.stats().stale_acks + s.stats().invalid_packets, 0);
    }

    let mut g = c.benchmark_group("receiveAck");

    g.throughput(Throughput::Elements(window));
    for (name, cfg) in [
        ("irn", TransportConfig::irn()),
        ("roce", TransportConfig::roce(true)),
    ] {
        g.bench_function(BenchmarkId::new("ack", name), |b| {
            b.iter_batched_ref(
                || sender_with_in_flight(cfg, WINDOW),
                |s| {
                    for k in 1..=window {
                        s.handle_packet(NOW, black_box(&ack(psn(k))));
                    }
                    while let Some(c) = s.poll_completion() {
                        black_box(c);
                    }
                },
                BatchSize::SmallInput,
            );
        });
    }

    g.throughput(Throughput::Elements(window - 1));
    g.bench_function(BenchmarkId::new("nack", "irn"), |b| {
        b.iter_batched_ref(
            || sender_with_in_flight(TransportConfig::irn(), WINDOW),
            |s| {
                for k in 1..window {
                    s.handle_packet(NOW, black_box(&nack(psn(0), psn(k))));
                }
            },
            BatchSize::SmallInput,
        );
    });
    g.finish();
}

// ----- timeout -----

/// One step of a timer-driven loop: wait for the deadline, handle it.
#[inline(always)]
fn expire(s: &mut Sender) {
    let deadline = s
        .poll_timeout()
        .expect("a timer runs while packets are in flight");
    s.handle_timeout(black_box(deadline));
}

fn timeout(c: &mut Criterion) {
    let extending = sender_with_in_flight(TransportConfig::irn(), WINDOW);
    let deadline = extending.poll_timeout().unwrap();
    {
        let mut s = extending.clone();
        s.handle_timeout(deadline);
        assert_eq!((s.stats().rto_extensions, s.stats().timeouts), (1, 0));
        expire(&mut s);
        assert_eq!((s.stats().rto_extensions, s.stats().timeouts), (1, 1));
        let mut s = sender_with_in_flight(TransportConfig::irn(), 2);
        expire(&mut s);
        expire(&mut s);
        assert_eq!((s.stats().rto_extensions, s.stats().timeouts), (0, 2));
        let mut s = sender_with_in_flight(TransportConfig::roce(false), WINDOW);
        expire(&mut s);
        assert_eq!(s.stats().timeouts, 1);
    }

    let mut g = c.benchmark_group("timeout");
    g.throughput(Throughput::Elements(1));

    g.bench_function(BenchmarkId::new("fire", "irn"), |b| {
        let mut s = sender_with_in_flight(TransportConfig::irn(), 2);
        b.iter(|| expire(&mut s));
        assert_eq!(s.stats().rto_extensions, 0);
    });

    g.bench_function(BenchmarkId::new("extend", "irn"), |b| {
        b.iter_batched_ref(
            || extending.clone(),
            |s| s.handle_timeout(black_box(deadline)),
            BatchSize::SmallInput,
        );
    });

    g.bench_function(BenchmarkId::new("extend_or_fire", "irn"), |b| {
        let mut s = extending.clone();
        b.iter(|| expire(&mut s));
        let st = s.stats();
        assert!(st.rto_extensions.abs_diff(st.timeouts) <= 1);
    });

    g.bench_function(BenchmarkId::new("not_due", "irn"), |b| {
        let mut s = extending.clone();
        let early = Time::from_ps(deadline.as_ps() - 1);
        b.iter(|| s.handle_timeout(black_box(early)));
        assert_eq!(s.stats().rto_extensions + s.stats().timeouts, 0);
    });

    g.bench_function(BenchmarkId::new("fire", "roce"), |b| {
        let mut s = sender_with_in_flight(TransportConfig::roce(false), WINDOW);
        b.iter(|| expire(&mut s));
    });
    g.finish();
}

// ----- bitmap -----

/// A BDP-cap bitmap (110 → 128 bits) with its head 45 bits into the ring.
fn offset_bitmap() -> RingBitmap {
    let mut b = RingBitmap::new(WINDOW);
    assert_eq!(b.capacity(), 128);
    b.advance(45);
    b
}

fn bitmap(c: &mut Criterion) {
    // Receiver after a loss at the head: packets 1..=70 and a few stragglers arrived.
    let mut run = offset_bitmap();
    for off in (1..=70).chain([75, 90, 101]) {
        run.set(off).unwrap();
    }
    assert_eq!(run.first_zero(1, 128), Some(71));
    // Sender's SACK bitmap in recovery: every odd packet SACKed.
    let mut alternating = offset_bitmap();
    for off in (1..WINDOW).step_by(2) {
        alternating.set(off).unwrap();
    }
    // Receiver's last-packet bitmap: every fourth packet ends a message.
    let mut ends = offset_bitmap();
    for off in (3..128).step_by(4) {
        ends.set(off).unwrap();
    }
    assert_eq!(ends.count_ones(128), 32);

    let mut g = c.benchmark_group("bitmap");
    g.throughput(Throughput::Elements(1));

    g.bench_function(BenchmarkId::new("first_zero", 128), |b| {
        b.iter(|| run.first_zero(black_box(1), black_box(128)));
    });

    g.bench_function(BenchmarkId::new("first_zero_lookahead", 128), |b| {
        // From each SACKed offset, the next hole is one further.
        let mut from = 1u32;
        b.iter(|| {
            let hole = alternating.first_zero(black_box(from), black_box(WINDOW));
            from += 2;
            if from >= WINDOW {
                from = 1;
            }
            hole
        });
    });

    g.bench_function(BenchmarkId::new("count_ones", 128), |b| {
        b.iter(|| ends.count_ones(black_box(128)));
    });

    for n in [1u32, 64] {
        g.bench_function(BenchmarkId::new(format!("advance_{n}"), 128), |b| {
            let mut bm = run.clone();
            b.iter(|| bm.advance(black_box(n)));
        });
    }

    g.bench_function(BenchmarkId::new("set", 128), |b| {
        let mut bm = offset_bitmap();
        let mut i = 0u32;
        b.iter(|| {
            i = i.wrapping_add(37);
            bm.set(black_box(i & 127))
        });
    });
    g.finish();
}

// ----- ordering (Eunomia) -----

/// Packet number `n` of an Eunomia connection starting at [`ISN`], all full-MTU; `last` marks
/// the end of a finite one.
fn ordered_packet(n: u64, last: bool) -> Packet {
    data(psn(n), MTU as u16, n == 0, last)
}

fn ordering_pool() -> MemoryController {
    MemoryController::new(OrderingConfig::default()).expect("the defaults are valid")
}

/// A fresh connection: IRN's receiver under Eunomia's layer with the default configuration.
fn ordered_receiver() -> OrderedReceiver {
    OrderedReceiver::new(
        receiver(TransportConfig::irn()),
        OrderingMode::Eunomia,
        &OrderingConfig::default(),
    )
}

/// One packet through the ordering layer and the transport: its ACK/SACK/NACK and any
/// completion drained.
#[inline(always)]
fn order(rx: &mut OrderedReceiver, pool: &mut MemoryController, pkt: &Packet) {
    rx.handle_packet(NOW, black_box(pkt), Some(pool));
    while let Some(p) = rx.poll_transmit(NOW) {
        black_box(p);
    }
    while let Some(c) = rx.poll_completion() {
        black_box(c);
    }
}

/// A fresh connection whose one [`BATCH`]-packet message arrives reversed, to completion.
fn reversed_connection(pool: &mut MemoryController) -> OrderedReceiver {
    let mut rx = ordered_receiver();
    for off in reversed() {
        order(&mut rx, pool, &ordered_packet(off, off == BATCH - 1));
    }
    rx
}

fn ordering(c: &mut Criterion) {
    {
        let mut pool = ordering_pool();
        for order_of_window in [reversed(), stride37(), lost_head()] {
            let mut rx = ordered_receiver();
            for w in 0..3 {
                for &off in &order_of_window {
                    order(&mut rx, &mut pool, &ordered_packet(w * BATCH + off, false));
                }
                assert_eq!(rx.receiver().expected_psn(), psn((w + 1) * BATCH));
            }
            assert_eq!(pool.blocks_in_use(), 4);
            assert_eq!(rx.layer_stats().dropped, 0);
            rx.release(Some(&mut pool));
        }
        let mut rx = ordered_receiver();
        let mut replies = Vec::new();
        for off in reversed() {
            rx.handle_packet(NOW, &ordered_packet(off, off == BATCH - 1), Some(&mut pool));
            replies.extend(std::iter::from_fn(|| rx.poll_transmit(NOW)));
        }
        let sacks = replies
            .iter()
            .filter(|p| matches!(p.kind, PacketKind::Sack { .. }))
            .count();
        assert_eq!((replies.len(), sacks), (BATCH as usize, BATCH as usize - 1));
        let done = rx.poll_completion().expect("the message completes");
        assert_eq!(done.bytes, BATCH * u64::from(MTU));
        assert_eq!((pool.blocks_in_use(), pool.stats().peak_blocks), (0, 4));
    }

    let mut g = c.benchmark_group("ordering");
    g.throughput(Throughput::Elements(BATCH));

    g.bench_function(BenchmarkId::new("in_order", "eunomia"), |b| {
        let mut pool = ordering_pool();
        let mut rx = ordered_receiver();
        let mut next = 0u64;
        b.iter(|| {
            for _ in 0..BATCH {
                order(&mut rx, &mut pool, &ordered_packet(next, false));
                next += 1;
            }
        });
        assert_eq!(rx.receiver().expected_psn(), psn(next));
        assert_eq!(pool.stats().peak_blocks, 0);
    });

    for (name, window) in [
        ("out_of_order", reversed()),
        ("out_of_order_stride37", stride37()),
        ("out_of_order_lost_head", lost_head()),
    ] {
        g.bench_function(BenchmarkId::new(name, "eunomia"), |b| {
            let mut pool = ordering_pool();
            let mut rx = ordered_receiver();
            let mut base = 0u64;
            b.iter(|| {
                for &off in &window {
                    order(&mut rx, &mut pool, &ordered_packet(base + off, false));
                }
                base += BATCH;
            });
            assert_eq!(rx.receiver().expected_psn(), psn(base));
            assert_eq!(rx.layer_stats().dropped, 0);
        });
    }

    g.bench_function(BenchmarkId::new("connection_reversed", "eunomia"), |b| {
        let mut pool = ordering_pool();
        b.iter(|| black_box(reversed_connection(&mut pool)));
        assert_eq!(pool.blocks_in_use(), 0);
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = receive_data, tx_free, receive_ack, timeout, bitmap, ordering
}
criterion_main!(benches);
