//! Property tests: two verbs queue pairs issue arbitrary mixes of Write, Write-with-immediate,
//! Read, Send, FetchAdd and CompareSwap at each other through a seeded channel that drops,
//! duplicates and reorders every kind of packet in both directions (requests, ACK/NACKs, read
//! responses, read ACK/NACKs), then heals.
//!
//! The verbs are also executed one after another on plain byte arrays (the reference). Checked,
//! TigerBeetle-style, while faults are on and after they stop:
//! - every send WQE completes exactly once, in posting order, with its own kind and length; a
//!   Read's bytes and an Atomic's original value are the reference's when its CQE appears, and
//!   a Write's bytes are in the peer's memory by then;
//! - every receive WQE is consumed exactly once, in posting order, by the Send (or
//!   Write-with-immediate) the reference gives it, with that message's length and immediate and
//!   its bytes already in the buffer;
//! - once everything has completed, both memory regions equal the reference byte for byte
//!   (atomics applied exactly once, out-of-order placement exact);
//! - after the channel heals, everything completes within a bound.
//!
//! Memory layout of each queue pair: the peer's Writes, Reads and Atomics go to `TARGET`, its
//! own sources and destinations are in `LOCAL`, the peer's Sends land in receive buffers in
//! `RECV`. The two directions touch disjoint bytes, so one reference per region serves both.
//! A WQE gets the fence when it must not overtake an earlier one (see [`conflicts`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use irn_core::cc::{CcConfig, DcqcnParams};
use irn_core::transport::TransportConfig;
use irn_core::verbs::{
    AtomicOp, Cqe, QpEndpoint, QueuePair, RecvStatus, RecvWqe, SendKind, SendOp, SendWqe,
    VerbsPacket,
};
use irn_core::{Duration, Ecn, Psn, Qpn, Time};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

const TARGET: u64 = 0;
const TARGET_LEN: u64 = 64 * 1024;
const LOCAL: u64 = 64 * 1024;
const LOCAL_LEN: u64 = 64 * 1024;
const RECV: u64 = 128 * 1024;
const MEM: u64 = 256 * 1024;
/// Atomics go to the first few words of `TARGET`, so they collide with each other and with
/// Writes and Reads.
const ATOMIC_WORDS: u64 = 12;

/// 40 Gb/s: 200 ps per byte; one-way latency.
const PS_PER_BYTE: u64 = 200;
const LATENCY: Duration = Duration::from_us(2);
/// After the channel heals, everything must finish within this.
const SETTLE: Duration = Duration::from_ms(20);

// ----- the verbs each side issues -----

/// A verb before addresses are resolved: positions are reduced modulo the room available.
#[derive(Debug, Clone)]
enum Raw {
    Write {
        len: u32,
        l: u64,
        r: u64,
    },
    WriteImm {
        len: u32,
        l: u64,
        r: u64,
        imm: u32,
    },
    Read {
        len: u32,
        l: u64,
        r: u64,
    },
    Send {
        len: u32,
        l: u64,
        slack: u32,
    },
    FetchAdd {
        word: u64,
        l: u64,
        add: u64,
    },
    CompareSwap {
        word: u64,
        l: u64,
        hit: bool,
        compare: u64,
        swap: u64,
    },
}

fn len() -> impl Strategy<Value = u32> {
    prop_oneof![3 => 0u32..=64, 4 => 65u32..=2048, 2 => 2049u32..=8192]
}

fn raw() -> impl Strategy<Value = Raw> {
    let pos = any::<u64>;
    prop_oneof![
        3 => (len(), pos(), pos()).prop_map(|(len, l, r)| Raw::Write { len, l, r }),
        1 => (len(), pos(), pos(), any::<u32>()).prop_map(|(len, l, r, imm)| Raw::WriteImm { len, l, r, imm }),
        3 => (len(), pos(), pos()).prop_map(|(len, l, r)| Raw::Read { len, l, r }),
        2 => (len(), pos(), 0u32..=64).prop_map(|(len, l, slack)| Raw::Send { len, l, slack }),
        1 => (0..ATOMIC_WORDS, pos(), any::<u64>()).prop_map(|(word, l, add)| Raw::FetchAdd { word, l, add }),
        1 => (0..ATOMIC_WORDS, pos(), any::<bool>(), any::<u64>(), any::<u64>())
            .prop_map(|(word, l, hit, compare, swap)| Raw::CompareSwap { word, l, hit, compare, swap }),
    ]
}

/// Which bytes a WQE touches, for deciding fences.
#[derive(Debug, Clone, Copy)]
struct Footprint {
    /// In the peer's memory: (start, end, how).
    remote: Option<(u64, u64, Remote)>,
    /// In the poster's memory: (start, end, written by the WQE rather than read).
    local: (u64, u64, bool),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Remote {
    /// Bytes placed by request packets (Write, Write-with-immediate).
    Placed,
    /// Bytes a Read fetches when its responses are (re)sent.
    Read,
    Atomic,
}

fn overlap(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Whether `later` may start only after `earlier` completes, given what IRN guarantees without a
/// fence: a Read or Atomic runs only after every earlier request packet has landed (the Read
/// WQE buffer), and Atomics run in order. Everything else that overlaps with a write on either
/// side needs the fence: a Write placed out of order can overtake an earlier Read, Atomic or
/// (through a late retransmission, §5.3.4) Write; an Atomic can run before an earlier Read's
/// responses are fetched; a Write's source can be resent after a later Read overwrote it.
fn conflicts(earlier: &Footprint, later: &Footprint) -> bool {
    let remote = match (earlier.remote, later.remote) {
        (Some((s1, e1, how1)), Some((s2, e2, how2))) if overlap((s1, e1), (s2, e2)) => {
            how2 == Remote::Placed || (how2 == Remote::Atomic && how1 == Remote::Read)
        }
        _ => false,
    };
    let (s1, e1, w1) = earlier.local;
    let (s2, e2, w2) = later.local;
    remote || ((w1 || w2) && overlap((s1, e1), (s2, e2)))
}

/// What the reference says one send WQE must produce.
#[derive(Debug, Clone)]
struct Expect {
    kind: SendKind,
    byte_len: u32,
    /// Reads: the bytes at `local` when the CQE appears. Atomics: the original value there.
    local: Option<(u64, Vec<u8>)>,
    /// Writes: the bytes at the peer's `remote` when the CQE appears, except in `volatile`.
    remote: Option<(u64, Vec<u8>)>,
    atomic_original: Option<u64>,
}

#[derive(Debug, Clone)]
struct ExpectRecv {
    byte_len: u32,
    imm: Option<u32>,
    /// Send: the buffer's bytes. Write-with-immediate: the written bytes at the peer's memory.
    bytes: (u64, Vec<u8>),
}

/// One direction's verbs, resolved and executed on the reference.
#[derive(Debug, Clone)]
struct Plan {
    wqes: Vec<SendWqe>,
    expect: Vec<Expect>,
    recvs: Vec<RecvWqe>,
    expect_recv: Vec<ExpectRecv>,
    /// Words of the responder's memory that Atomics change: a Write's bytes there may legally
    /// differ from the Write's by the time its CQE appears (an unfenced later Atomic).
    volatile: Vec<u64>,
    fences: usize,
}

fn read_u64(m: &[u8], at: u64) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&m[at as usize..at as usize + 8]);
    u64::from_le_bytes(w)
}

/// Resolves addresses, decides fences, and runs the verbs in order on `req` (the poster's
/// memory) and `resp` (the peer's).
fn plan(raws: &[Raw], req: &mut [u8], resp: &mut [u8]) -> Plan {
    let mut p = Plan {
        wqes: Vec::new(),
        expect: Vec::new(),
        recvs: Vec::new(),
        expect_recv: Vec::new(),
        volatile: Vec::new(),
        fences: 0,
    };
    let mut prints: Vec<Footprint> = Vec::new();
    let mut recv_at = RECV;
    let place = |base: u64, room: u64, pos: u64, len: u32| base + pos % (room - u64::from(len) + 1);
    for raw in raws {
        let (op, fp) = match *raw {
            Raw::Write { len, l, r } | Raw::WriteImm { len, l, r, .. } => {
                let local = place(LOCAL, LOCAL_LEN, l, len);
                let remote = place(TARGET, TARGET_LEN, r, len);
                let op = match *raw {
                    Raw::WriteImm { imm, .. } => SendOp::WriteImm {
                        local,
                        remote,
                        len,
                        imm,
                    },
                    _ => SendOp::Write { local, remote, len },
                };
                let end = |a: u64| a + u64::from(len);
                let fp = Footprint {
                    remote: Some((remote, end(remote), Remote::Placed)),
                    local: (local, end(local), false),
                };
                (op, fp)
            }
            Raw::Read { len, l, r } => {
                let local = place(LOCAL, LOCAL_LEN, l, len);
                let remote = place(TARGET, TARGET_LEN, r, len);
                let end = |a: u64| a + u64::from(len);
                let fp = Footprint {
                    remote: Some((remote, end(remote), Remote::Read)),
                    local: (local, end(local), true),
                };
                (SendOp::Read { local, remote, len }, fp)
            }
            Raw::Send { len, l, .. } => {
                let local = place(LOCAL, LOCAL_LEN, l, len);
                let fp = Footprint {
                    remote: None,
                    local: (local, local + u64::from(len), false),
                };
                (SendOp::Send { local, len }, fp)
            }
            Raw::FetchAdd { word, l, .. } | Raw::CompareSwap { word, l, .. } => {
                let local = place(LOCAL, LOCAL_LEN, l, 8);
                let remote = TARGET + 8 * word;
                let op = match *raw {
                    Raw::FetchAdd { add, .. } => AtomicOp::FetchAdd { add },
                    Raw::CompareSwap {
                        hit, compare, swap, ..
                    } => AtomicOp::CompareSwap {
                        compare: if hit { read_u64(resp, remote) } else { compare },
                        swap,
                    },
                    _ => unreachable!(),
                };
                let fp = Footprint {
                    remote: Some((remote, remote + 8, Remote::Atomic)),
                    local: (local, local + 8, true),
                };
                (SendOp::Atomic { local, remote, op }, fp)
            }
        };
        let fence = prints.iter().any(|e| conflicts(e, &fp));
        p.fences += usize::from(fence);
        prints.push(fp);
        p.wqes.push(SendWqe { op, fence });

        // The reference: this verb, on its own, in order.
        let range = |a: u64, n: u32| a as usize..a as usize + n as usize;
        let mut e = Expect {
            kind: op.kind(),
            byte_len: op.len(),
            local: None,
            remote: None,
            atomic_original: None,
        };
        match op {
            SendOp::Write { local, remote, len }
            | SendOp::WriteImm {
                local, remote, len, ..
            } => {
                let data = req[range(local, len)].to_vec();
                resp[range(remote, len)].copy_from_slice(&data);
                if let SendOp::WriteImm { imm, .. } = op {
                    p.recvs.push(RecvWqe {
                        addr: recv_at,
                        len: 0,
                    });
                    p.expect_recv.push(ExpectRecv {
                        byte_len: len,
                        imm: Some(imm),
                        bytes: (remote, data.clone()),
                    });
                }
                e.remote = Some((remote, data));
            }
            SendOp::Read { local, remote, len } => {
                let data = resp[range(remote, len)].to_vec();
                req[range(local, len)].copy_from_slice(&data);
                e.local = Some((local, data));
            }
            SendOp::Send { local, len } => {
                let Raw::Send { slack, .. } = *raw else {
                    unreachable!()
                };
                let data = req[range(local, len)].to_vec();
                resp[range(recv_at, len)].copy_from_slice(&data);
                p.recvs.push(RecvWqe {
                    addr: recv_at,
                    len: len + slack,
                });
                p.expect_recv.push(ExpectRecv {
                    byte_len: len,
                    imm: None,
                    bytes: (recv_at, data),
                });
                recv_at += u64::from(len + slack);
            }
            SendOp::Atomic { local, remote, op } => {
                let original = read_u64(resp, remote);
                resp[range(remote, 8)].copy_from_slice(&op.apply(original).to_le_bytes());
                req[range(local, 8)].copy_from_slice(&original.to_le_bytes());
                e.local = Some((local, original.to_le_bytes().to_vec()));
                e.atomic_original = Some(original);
                p.volatile.push(remote);
            }
        }
        p.expect.push(e);
    }
    assert!(recv_at <= MEM);
    p
}

// ----- the channel -----

#[derive(Debug, Clone)]
struct Faults {
    /// Per-mille probabilities, for every packet in both directions.
    drop: u32,
    duplicate: u32,
    /// Per mille of ECN-capable packets a switch would mark CE.
    mark: u32,
    /// Extra random delay up to this much: reorders packets in flight.
    jitter: Duration,
    heal_at: Time,
}

#[derive(Debug, Clone)]
struct Scenario {
    a_ops: Vec<Raw>,
    b_ops: Vec<Raw>,
    isns: [u32; 4],
    /// When each side posts its receive WQEs (later than zero: the peer's first Sends find no
    /// receive WQE and must be resent).
    recv_post_us: [u64; 2],
    faults: Faults,
    seed: u64,
}

/// One side of the exchange, with what it has been checked to have done so far.
struct Side {
    qp: QueuePair,
    /// This side's requests, planned against (this side, the peer).
    plan: Plan,
    sends_done: usize,
    /// Receive WQEs posted here are the peer's plan's `recvs`.
    recvs_done: usize,
    recvs_posted: bool,
    link_free: Time,
}

struct Run {
    sides: [Side; 2],
    reference: [Vec<u8>; 2],
    sc: Scenario,
    rng: StdRng,
    now: Time,
    /// (arrival, tie-break, destination side, index into `packets`).
    wire: BinaryHeap<Reverse<(Time, u64, usize, usize)>>,
    packets: Vec<VerbsPacket>,
    seq: u64,
}

impl Run {
    fn new(cfg: TransportConfig, sc: Scenario) -> Self {
        let mut rng = StdRng::seed_from_u64(sc.seed);
        let mut mem = [vec![0u8; MEM as usize], vec![0u8; MEM as usize]];
        for m in &mut mem {
            rng.fill_bytes(m);
        }
        let mut reference = mem.clone();
        let [ra, rb] = &mut reference;
        let plan_a = plan(&sc.a_ops, ra, rb);
        let plan_b = plan(&sc.b_ops, rb, ra);
        let ep = |i: usize| QpEndpoint {
            qpn: Qpn::new(0x100 + i as u32),
            request_isn: Psn::new(sc.isns[2 * i]),
            response_isn: Psn::new(sc.isns[2 * i + 1]),
            memory_bytes: MEM,
        };
        let side = |i: usize, plan: Plan| {
            let mut qp = QueuePair::new(cfg, ep(i), ep(1 - i)).unwrap();
            qp.memory_mut().as_bytes_mut().copy_from_slice(&mem[i]);
            for w in &plan.wqes {
                qp.post_send(*w).unwrap();
            }
            Side {
                qp,
                plan,
                sends_done: 0,
                recvs_done: 0,
                recvs_posted: false,
                link_free: Time::ZERO,
            }
        };
        let sides = [side(0, plan_a), side(1, plan_b)];
        Run {
            sides,
            reference,
            sc,
            rng,
            now: Time::ZERO,
            wire: BinaryHeap::new(),
            packets: Vec::new(),
            seq: 0,
        }
    }

    fn chance(&mut self, per_mille: u32) -> bool {
        self.now < self.sc.faults.heal_at && self.rng.random_range(0..1000) < per_mille
    }

    /// Posts the receive WQEs for the peer's Sends once their time comes.
    fn post_recvs(&mut self) {
        for i in 0..2 {
            let at = Time::ZERO + Duration::from_us(self.sc.recv_post_us[i]);
            if !self.sides[i].recvs_posted && self.now >= at {
                let recvs = self.sides[1 - i].plan.recvs.clone();
                for r in recvs {
                    self.sides[i].qp.post_recv(r).unwrap();
                }
                self.sides[i].recvs_posted = true;
            }
        }
    }

    fn transmit(&mut self) {
        for i in 0..2 {
            while let Some(pkt) = self.sides[i].qp.poll_transmit(self.now) {
                let depart = self.sides[i].link_free.max(self.now)
                    + Duration::from_ps(PS_PER_BYTE * u64::from(pkt.wire_len()));
                self.sides[i].link_free = depart;
                if self.chance(self.sc.faults.drop) {
                    continue;
                }
                let mut pkt = pkt;
                if pkt.ecn != Ecn::NotEct && self.chance(self.sc.faults.mark) {
                    pkt.ecn = Ecn::Ce;
                }
                let copies = if self.chance(self.sc.faults.duplicate) {
                    2
                } else {
                    1
                };
                for _ in 0..copies {
                    let jitter = if self.now < self.sc.faults.heal_at {
                        Duration::from_ps(self.rng.random_range(0..=self.sc.faults.jitter.as_ps()))
                    } else {
                        Duration::ZERO
                    };
                    self.packets.push(pkt.clone());
                    self.seq += 1;
                    self.wire.push(Reverse((
                        depart + LATENCY + jitter,
                        self.seq,
                        1 - i,
                        self.packets.len() - 1,
                    )));
                }
            }
        }
    }

    /// Checks every completion as it appears.
    fn collect(&mut self) -> Result<(), TestCaseError> {
        for i in 0..2 {
            while let Some(c) = self.sides[i].qp.poll_completion() {
                match c {
                    Cqe::Send(c) => self.check_send(i, c)?,
                    Cqe::Recv(c) => self.check_recv(i, c)?,
                }
            }
        }
        Ok(())
    }

    fn check_send(&mut self, i: usize, c: irn_core::verbs::SendCqe) -> Result<(), TestCaseError> {
        let (me, peer) = (&self.sides[i], &self.sides[1 - i]);
        let n = me.sends_done;
        prop_assert!(n < me.plan.wqes.len(), "side {i}: extra send CQE {c:?}");
        prop_assert_eq!(c.id.0, n as u64, "side {}: send CQEs out of order", i);
        let e = &me.plan.expect[n];
        prop_assert_eq!(c.kind, e.kind, "side {} WQE {}", i, n);
        prop_assert_eq!(c.byte_len, e.byte_len, "side {} WQE {}", i, n);
        prop_assert_eq!(c.atomic_original, e.atomic_original, "side {} WQE {}", i, n);
        if let Some((addr, want)) = &e.local {
            let got = me.qp.memory().read(*addr, want.len() as u64).unwrap();
            prop_assert!(
                got == &want[..],
                "side {i} WQE {n} ({:?}): wrong bytes at completion",
                e.kind
            );
        }
        if let Some((addr, want)) = &e.remote {
            let got = peer.qp.memory().read(*addr, want.len() as u64).unwrap();
            let volatile = &me.plan.volatile;
            let bad = (0..want.len()).find(|&k| {
                let at = addr + k as u64;
                got[k] != want[k] && !volatile.contains(&(at & !7))
            });
            prop_assert!(
                bad.is_none(),
                "side {i} WQE {n}: Write completed before byte {bad:?} landed"
            );
        }
        self.sides[i].sends_done += 1;
        Ok(())
    }

    fn check_recv(&mut self, i: usize, c: irn_core::verbs::RecvCqe) -> Result<(), TestCaseError> {
        let (me, peer) = (&self.sides[i], &self.sides[1 - i]);
        let n = me.recvs_done;
        let expect = &peer.plan.expect_recv;
        prop_assert!(n < expect.len(), "side {i}: extra receive CQE {c:?}");
        prop_assert_eq!(c.id.0, n as u64, "side {}: receive CQEs out of order", i);
        let e = &expect[n];
        prop_assert_eq!(c.status, RecvStatus::Success);
        prop_assert_eq!(c.byte_len, e.byte_len, "side {} receive {}", i, n);
        prop_assert_eq!(c.imm, e.imm, "side {} receive {}", i, n);
        let (addr, want) = &e.bytes;
        let got = me.qp.memory().read(*addr, want.len() as u64).unwrap();
        let volatile = &peer.plan.volatile;
        let bad = (0..want.len())
            .find(|&k| got[k] != want[k] && !volatile.contains(&((addr + k as u64) & !7)));
        prop_assert!(
            bad.is_none(),
            "side {i} receive {n}: completed before byte {bad:?} landed"
        );
        self.sides[i].recvs_done += 1;
        Ok(())
    }

    fn finished(&self) -> bool {
        (0..2).all(|i| {
            let s = &self.sides[i];
            s.sends_done == s.plan.wqes.len()
                && s.recvs_done == self.sides[1 - i].plan.expect_recv.len()
                && s.qp.is_idle()
        })
    }

    fn next_event(&self) -> Option<Time> {
        let recv_posts = (0..2)
            .filter(|&i| !self.sides[i].recvs_posted)
            .map(|i| Time::ZERO + Duration::from_us(self.sc.recv_post_us[i]));
        self.wire
            .peek()
            .map(|Reverse((t, ..))| *t)
            .into_iter()
            .chain(self.sides.iter().filter_map(|s| s.qp.poll_timeout()))
            .chain(recv_posts)
            .min()
    }

    /// Runs until both sides have completed everything, or fails if that does not happen in time.
    fn run(mut self) -> Result<Self, TestCaseError> {
        let deadline = self.sc.faults.heal_at + SETTLE;
        loop {
            self.post_recvs();
            self.transmit();
            self.collect()?;
            if self.finished() {
                break;
            }
            let next = self.next_event().unwrap_or(Time::MAX);
            prop_assert!(
                next <= deadline,
                "stuck at {}: sends {}/{} and {}/{}, receives {}/{} and {}/{}; A {:?}; B {:?}",
                self.now,
                self.sides[0].sends_done,
                self.sides[0].plan.wqes.len(),
                self.sides[1].sends_done,
                self.sides[1].plan.wqes.len(),
                self.sides[0].recvs_done,
                self.sides[1].plan.expect_recv.len(),
                self.sides[1].recvs_done,
                self.sides[0].plan.expect_recv.len(),
                self.sides[0].qp.stats(),
                self.sides[1].qp.stats()
            );
            self.now = next;
            for s in &mut self.sides {
                if s.qp.poll_timeout().is_some_and(|t| t <= next) {
                    s.qp.handle_timeout(next);
                }
            }
            while let Some(&Reverse((t, _, to, key))) = self.wire.peek() {
                if t > self.now {
                    break;
                }
                self.wire.pop();
                let pkt = std::mem::replace(&mut self.packets[key], placeholder());
                self.sides[to].qp.handle_packet(self.now, &pkt);
                // Let each arrival be answered before the next, as a NIC would.
                self.transmit();
                self.collect()?;
            }
        }
        for i in 0..2 {
            let got = self.sides[i].qp.memory().contents();
            let want = &self.reference[i][..];
            let bad = (0..got.len()).find(|&k| got[k] != want[k]);
            prop_assert!(
                bad.is_none(),
                "side {i}: memory differs from the in-order reference at byte {bad:?}"
            );
            prop_assert!(self.sides[i].qp.poll_completion().is_none());
            // MSN: one per message the peer sent (Read and Atomic requests included).
            let msn = self.sides[i].qp.stats().responder.msn;
            prop_assert_eq!(msn, self.sides[1 - i].plan.wqes.len() as u64);
        }
        Ok(self)
    }
}

/// What is left in the packet store once a packet has been delivered.
fn placeholder() -> VerbsPacket {
    VerbsPacket {
        dest_qp: Qpn::new(0),
        opcode: irn_core::verbs::Opcode::Ack,
        psn: Psn::ZERO,
        retransmission: false,
        ts: 0,
        ecn: Ecn::NotEct,
        ext: irn_core::verbs::Ext::ReadAck {
            sack: None,
            echo: Default::default(),
        },
        payload: Vec::new(),
    }
}

// ----- strategies -----

fn isn() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..(1 << 24), ((1u32 << 24) - 16)..(1 << 24)]
}

fn faults(lossy: bool) -> impl Strategy<Value = Faults> {
    let (drop, dup, jitter) = if lossy {
        (0u32..=250, 0u32..=100, 0u64..=20)
    } else {
        (0..=0, 0..=0, 0..=0)
    };
    (drop, dup, 0u32..=500, jitter, 0u64..=2000).prop_map(
        |(drop, duplicate, mark, jitter_us, heal_us)| Faults {
            drop,
            duplicate,
            mark,
            jitter: Duration::from_us(jitter_us),
            heal_at: Time::ZERO + Duration::from_us(heal_us),
        },
    )
}

fn scenario(lossy: bool, max_ops: usize) -> impl Strategy<Value = Scenario> {
    let ops = move || prop::collection::vec(raw(), 0..=max_ops);
    // RoCE with PFC (lossless) has no timer to resend a Send that found no receive WQE, so only
    // lossy runs post receive WQEs late.
    let late = if lossy { 300 } else { 0 };
    let recv_post = prop_oneof![3 => Just(0u64), 1 => 0u64..=late];
    (
        ops(),
        ops(),
        [isn(), isn(), isn(), isn()],
        [recv_post.clone(), recv_post],
        faults(lossy),
        any::<u64>(),
    )
        .prop_map(
            |(a_ops, b_ops, isns, recv_post_us, faults, seed)| Scenario {
                a_ops,
                b_ops,
                isns,
                recv_post_us,
                faults,
                seed,
            },
        )
}

/// A small BDP cap and MTU: messages of many packets, and windows that fill.
fn small(cfg: TransportConfig) -> TransportConfig {
    TransportConfig {
        bdp_cap: cfg.bdp_cap.map(|_| 8),
        mtu: 256,
        ..cfg
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1200))]

    #[test]
    fn irn_verbs_survive_any_faults(sc in scenario(true, 12)) {
        Run::new(TransportConfig::irn(), sc).run()?;
    }

    #[test]
    fn irn_verbs_with_a_small_window_survive_any_faults(sc in scenario(true, 12)) {
        Run::new(small(TransportConfig::irn()), sc).run()?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn irn_go_back_n_verbs_survive_any_faults(sc in scenario(true, 10)) {
        Run::new(small(TransportConfig::irn_go_back_n()), sc).run()?;
    }

    #[test]
    fn irn_without_sack_verbs_survive_any_faults(sc in scenario(true, 10)) {
        Run::new(small(TransportConfig::irn_without_sack()), sc).run()?;
    }

    #[test]
    fn irn_without_bdp_fc_verbs_survive_any_faults(sc in scenario(true, 10)) {
        Run::new(TransportConfig::irn_without_bdp_fc(), sc).run()?;
    }

    /// DCQCN over verbs: CE marks on requests and responses come back as ECN-echoes and CNPs
    /// (for the request sender and the response sender), whose rate cuts must not break any
    /// semantics.
    #[test]
    fn irn_verbs_with_dcqcn_survive_marks_and_faults(sc in scenario(true, 10)) {
        let cfg = TransportConfig {
            cc: CcConfig::Dcqcn(DcqcnParams::default()),
            ..small(TransportConfig::irn())
        };
        let run = Run::new(cfg, sc).run()?;
        let marked: u64 = run.sides.iter().map(|s| {
            let st = s.qp.stats();
            st.responder.ecn_marked + st.requester.ecn_marked
        }).sum();
        let cnps: u64 = run.sides.iter().map(|s| {
            let st = s.qp.stats();
            st.responder.cnps_sent + st.requester.cnps_sent
        }).sum();
        prop_assert!(cnps <= marked);
        prop_assert_eq!(marked > 0, cnps > 0);
    }

    /// RoCE with PFC: go-back-N, no timeouts, over a lossless channel that keeps order.
    #[test]
    fn roce_verbs_complete_on_a_lossless_in_order_channel(sc in scenario(false, 12)) {
        let run = Run::new(TransportConfig::roce(true), sc).run()?;
        for s in &run.sides {
            let st = s.qp.stats();
            prop_assert_eq!(st.requests.retransmissions + st.responses.retransmissions, 0);
        }
    }
}

#[test]
fn fences_are_decided_by_overlap() {
    let mut req = vec![0u8; MEM as usize];
    let mut resp = vec![0u8; MEM as usize];
    let raws = [
        Raw::Write {
            len: 100,
            l: 0,
            r: 0,
        },
        // Reads after a Write of the same bytes need no fence: the Read waits for the Write.
        Raw::Read {
            len: 100,
            l: 1000,
            r: 50,
        },
        // A Write over bytes an earlier Read fetches does.
        Raw::Write {
            len: 10,
            l: 5000,
            r: 60,
        },
        // Atomics after Writes and Atomics on the same word do not.
        Raw::FetchAdd {
            word: 20,
            l: 2000,
            add: 1,
        },
        Raw::FetchAdd {
            word: 20,
            l: 2008,
            add: 1,
        },
        // Elsewhere, no fence.
        Raw::Send {
            len: 10,
            l: 9000,
            slack: 0,
        },
    ];
    let p = plan(&raws, &mut req, &mut resp);
    let fences: Vec<bool> = p.wqes.iter().map(|w| w.fence).collect();
    assert_eq!(fences, [false, false, true, false, false, false]);
}
