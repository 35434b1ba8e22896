//! ConWeave's ToR logic (Song et al., SIGCOMM'23), as sans-IO state machines: what the source
//! ToR does with each data packet of a flow and each reply, and what the destination ToR does
//! with each data packet. The simulation carries the packets, the replies and the reorder
//! queues; this module decides.
//!
//! The behaviour is that of ConWeave's public ns-3 code (`conweave-project/conweave-ns3`,
//! `src/point-to-point/model/conweave-routing.cc`; facts gathered, with their sources, in
//! `docs/conweave-ns3.md`), read for facts only:
//! - **Source ToR** ([`TxFlow`]). A flow's packets run in *epochs*. An epoch's first packet
//!   asks for an RTT reply (INIT). A reply in time (base RTT + θ_reply) makes the flow *stable*:
//!   its next packet opens a new epoch on the same path, so a busy flow probes about once per
//!   round trip. The first packet after the deadline without a reply is the TAIL: it still takes
//!   the old path, later packets (phase 1) a new one, the first of two random candidates not
//!   marked busy by a NOTIFY. At most one reroute per epoch: the deadline is then off until the
//!   destination's CLEAR (its answer to the TAIL) or θ_inactive of silence opens a new epoch
//!   (after silence, on a new random path). The deadline is checked when a packet comes, as in
//!   ns-3: no timer event.
//! - **Destination ToR** ([`RxFlow`]). Phase-1 packets that arrive before the TAIL are held in the
//!   flow's reorder queue, released right after the TAIL or when a deadline passes: the last
//!   old-path packet's arrival plus the send-time gap between it and the TAIL plus a slack
//!   (θ_default_wait instead of the gap when no old-path packet was seen). Each INIT is answered
//!   with an RTT reply and each TAIL with a CLEAR; CE-marked packets are answered with a NOTIFY
//!   naming their path. Packets of a previous epoch go straight on, unanswered.
//!
//! *Choices, as ns-3's:* flow state is per flow and never ages out (ns-3 erases state idle for
//! 2 ms, longer than θ_inactive, so a returning flow opens a new epoch either way); reorder
//! queues and flow tables are unlimited unless limited as the P4 switch's are.

use irn_core::time::{Duration, Time};

use crate::rng::SplitMix;

/// ConWeave's parameters, as its ns-3 `run.py` sets them for the 2-tier leaf-spine (lines
/// 261–267, the same for lossless and IRN runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConWeaveParams {
    /// θ_reply: the reply deadline is the ToR-to-ToR base RTT (propagation only) plus this.
    pub reply_extra: Duration,
    /// θ_path_busy: how long a NOTIFY marks its path busy.
    pub path_busy: Duration,
    /// θ_inactive: silence after which a flow's next packet opens a new epoch on a new path.
    pub inactive: Duration,
    /// The slack added to a reorder queue's expected TAIL arrival.
    pub flush_slack: Duration,
    /// A reorder queue's wait for the TAIL when no old-path packet of the epoch was seen.
    pub default_wait: Duration,
    /// Reorder queues per egress port of a destination ToR (the P4 switch's: 24 of a 100G
    /// port's 32 queues, 12 at 25G); `None`: unlimited, as in ConWeave's ns-3.
    pub reorder_queues: Option<u16>,
    /// With `reorder_queues`: a port's queues are split into this many equal groups and a flow
    /// may take only one queue of each, chosen by a hash of the flow (the P4 switch: 3 groups,
    /// `docs/conweave-ns3.md` §6); `None`: any free queue.
    pub reorder_queue_groups: Option<u8>,
    /// Flows a source ToR's flow table holds at once (the P4 switch's exact-match table: 4096
    /// entries in its testbed build, 65,536 in its resource study); `None`: unlimited, as in
    /// ConWeave's ns-3.
    pub flow_table: Option<u32>,
    /// Held packets are kept outside the switch buffer and admitted to it when their queue
    /// flushes, as in ConWeave's ns-3 (a burst may then be dropped even under PFC); otherwise
    /// they are charged to the buffer when they arrive, as in the P4 switch.
    pub hold_outside_buffer: bool,
    /// The source ToRs' path tables never change, as in ConWeave's ns-3, which builds them once:
    /// after a link failure they keep offering paths through it. Otherwise they follow routing
    /// when it reconverges.
    pub static_paths: bool,
}

impl ConWeaveParams {
    /// The leaf-spine values: 4 µs, 16 µs, 300 µs, 16 µs, 200 µs.
    pub const LEAF_SPINE: ConWeaveParams = ConWeaveParams {
        reply_extra: Duration::from_us(4),
        path_busy: Duration::from_us(16),
        inactive: Duration::from_us(300),
        flush_slack: Duration::from_us(16),
        default_wait: Duration::from_us(200),
        reorder_queues: None,
        reorder_queue_groups: None,
        flow_table: None,
        hold_outside_buffer: false,
        static_paths: false,
    };
}

/// What a data packet's ConWeave header says, from the source ToR to the destination ToR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    /// The path it takes: an index into the source ToR's paths to the destination ToR.
    pub path: u8,
    pub epoch: u32,
    /// 0 before the epoch's reroute, 1 after (the paper's REROUTE bit).
    pub phase: u8,
    pub kind: TagKind,
    /// When it passed the source ToR.
    pub sent: Time,
    /// When the epoch's TAIL passed the source ToR (`Time::ZERO` before it).
    pub tail_sent: Time,
}

/// The role of a data packet in its epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagKind {
    /// The epoch's first packet: asks for an RTT reply (the paper's RTT_REQUEST).
    Init,
    /// The last packet on the old path, sent once the reply was late.
    Tail,
    Data,
}

/// A destination ToR's answer to a data packet, sent back to its source ToR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// The answer to an INIT (the paper's RTT_REPLY).
    Rtt { epoch: u32 },
    /// The answer to a TAIL (the paper's CLEAR).
    Clear { epoch: u32 },
}

/// Off: a deadline that never passes.
const NEVER: Time = Time::MAX;

/// The reorder queues flow `flow` may take at a port of `limit` queues split into `groups`
/// equal groups: one per group, chosen by a hash of the flow, in group order (the P4 switch's
/// rule, with three groups, one hash function each).
pub fn candidate_queues(flow: usize, limit: usize, groups: u8) -> impl Iterator<Item = usize> {
    let size = limit / usize::from(groups);
    (0..usize::from(groups)).map(move |g| {
        let hash = SplitMix::new((flow as u64) << 8 | g as u64).next_u64();
        g * size + (hash % size as u64) as usize
    })
}

/// One flow's state at its source ToR.
#[derive(Debug, Clone, Copy)]
pub struct TxFlow {
    /// It has sent a packet.
    known: bool,
    /// A reply or CLEAR came: the next packet opens a new epoch.
    stable: bool,
    /// When its last packet passed.
    active: Time,
    /// The reply deadline; `NEVER` once it has passed (or the reply came).
    deadline: Time,
    epoch: u32,
    phase: u8,
    path: u8,
    tail_sent: Time,
}

impl Default for TxFlow {
    fn default() -> Self {
        TxFlow {
            known: false,
            stable: true,
            active: Time::ZERO,
            deadline: NEVER,
            epoch: 0,
            phase: 0,
            path: 0,
            tail_sent: Time::ZERO,
        }
    }
}

/// A path choice: the first of two random candidates that is not busy, and whether one was
/// (when both are busy, the first candidate).
pub type Choice = (u8, bool);

/// ConWeave's pick between two random candidate paths `(a, b)` (drawn with replacement, so
/// perhaps the same, perhaps the current path): the first that `free` says no NOTIFY has marked
/// busy.
pub fn pick((a, b): (usize, usize), free: impl Fn(usize) -> bool) -> Choice {
    match (free(a), free(b)) {
        (true, _) => (a as u8, true),
        (false, true) => (b as u8, true),
        (false, false) => (a as u8, false),
    }
}

impl TxFlow {
    /// A data packet of the flow passes its source ToR at `now`, `base_rtt` (propagation) from
    /// its destination ToR: the tag it carries, whose `path` it takes. `choose` draws a path
    /// choice; it is called only when the flow may move.
    pub fn on_data(
        &mut self,
        now: Time,
        params: &ConWeaveParams,
        base_rtt: Duration,
        choose: impl FnOnce() -> Choice,
    ) -> Tag {
        let new = !self.known;
        let expired = new || self.active + params.inactive < now;
        let opens = expired || self.stable;
        self.known = true;
        self.stable = false;
        self.active = now;
        let timeout = !opens && self.deadline < now;
        let mut path = self.path;
        let kind = if opens {
            self.deadline = now + base_rtt + params.reply_extra;
            self.epoch += 1;
            self.phase = 0;
            self.tail_sent = Time::ZERO;
            if expired {
                let (choice, good) = choose();
                if new || good {
                    self.path = choice;
                    path = choice;
                }
            }
            TagKind::Init
        } else if timeout {
            // The TAIL leaves on the old path; the rest of the epoch moves.
            self.deadline = NEVER;
            self.phase = 1;
            self.tail_sent = now;
            if let (choice, true) = choose() {
                self.path = choice;
            }
            TagKind::Tail
        } else {
            TagKind::Data
        };
        Tag {
            path,
            epoch: self.epoch,
            phase: if kind == TagKind::Tail { 0 } else { self.phase },
            kind,
            sent: now,
            tail_sent: self.tail_sent,
        }
    }

    /// A reply for the flow comes back at `now`. A reply of another epoch, an RTT reply after
    /// the deadline or after the reroute, and a CLEAR before one are ignored.
    pub fn on_reply(&mut self, now: Time, reply: Reply) {
        match reply {
            Reply::Rtt { epoch }
                if epoch == self.epoch && self.phase == 0 && now < self.deadline =>
            {
                // In time. (Past a timeout the phase is 1; a repeated reply changes nothing.)
                self.stable = true;
                self.deadline = NEVER;
            }
            Reply::Clear { epoch } if epoch == self.epoch && self.phase == 1 => self.stable = true,
            _ => {}
        }
    }

    /// The flow's path went down and routing, reconverged, moved it to `path` at `now`: not a
    /// ConWeave reroute, so no TAIL marks the change and the destination ToR is not told; its
    /// packets go on in the same epoch and phase, and those of the two paths meet there in
    /// whatever order they come (ConWeave's known limit under failures, Eunomia §5.6). Whether
    /// it moved: a new flow, or one whose next packet opens a new epoch after θ_inactive of
    /// silence, picks a path of its own instead.
    pub fn move_off_failed(&mut self, now: Time, params: &ConWeaveParams, path: u8) -> bool {
        if !self.known || self.active + params.inactive < now {
            return false;
        }
        self.path = path;
        true
    }

    /// Whether it has sent a packet.
    pub fn is_known(&self) -> bool {
        self.known
    }

    /// The path its next packets take.
    pub fn path(&self) -> u8 {
        self.path
    }
}

/// What the destination ToR does with a data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// Hold it in the flow's reorder queue (else forward it now).
    pub hold: bool,
    /// Set the flow's reorder queue to flush at this time (the queue is created by the first
    /// held packet; later deadlines replace earlier ones).
    pub flush_at: Option<Time>,
    /// Answer its source ToR.
    pub reply: Option<Reply>,
    /// It belongs to the current epoch, so a CE mark on it is answered with a NOTIFY.
    pub may_notify: bool,
}

/// One flow's state at its destination ToR.
#[derive(Debug, Clone, Copy)]
pub struct RxFlow {
    epoch: u32,
    phase: u8,
    /// The latest old-path (phase 0) packet's send and arrival times...
    phase0_sent: Time,
    phase0_arrived: Time,
    /// ...and whether the epoch has had one.
    seen_phase0: bool,
    tail_sent: Time,
    /// Packets are held in its reorder queue.
    reordering: bool,
}

impl Default for RxFlow {
    fn default() -> Self {
        RxFlow {
            epoch: 1,
            phase: 0,
            phase0_sent: Time::ZERO,
            phase0_arrived: Time::ZERO,
            seen_phase0: false,
            tail_sent: Time::ZERO,
            reordering: false,
        }
    }
}

impl RxFlow {
    /// A data packet tagged `tag` arrives at `now`.
    pub fn on_data(&mut self, now: Time, params: &ConWeaveParams, tag: &Tag) -> Verdict {
        if tag.epoch < self.epoch {
            return Verdict {
                hold: false,
                flush_at: None,
                reply: None,
                may_notify: false,
            };
        }
        let is_tail = tag.kind == TagKind::Tail;
        if tag.phase == 0 {
            self.phase0_sent = tag.sent;
            self.phase0_arrived = now;
        }
        let early = if tag.epoch > self.epoch {
            self.epoch = tag.epoch;
            self.phase = u8::from(is_tail);
            self.seen_phase0 = tag.phase == 0;
            tag.phase > self.phase
        } else {
            if tag.phase == 0 {
                self.seen_phase0 = true;
            }
            if is_tail {
                // While packets are held, the phase turns when they are flushed.
                if !self.reordering {
                    self.phase = 1;
                }
                false
            } else {
                tag.phase > self.phase
            }
        };
        if is_tail || tag.phase == 1 {
            self.tail_sent = tag.tail_sent;
        }
        let gap = if self.seen_phase0 {
            self.tail_sent.saturating_since(self.phase0_sent)
        } else {
            params.default_wait
        };
        let mut verdict = Verdict {
            hold: false,
            flush_at: None,
            reply: match tag.kind {
                TagKind::Init => Some(Reply::Rtt { epoch: tag.epoch }),
                TagKind::Tail => Some(Reply::Clear { epoch: tag.epoch }),
                TagKind::Data => None,
            },
            may_notify: true,
        };
        if tag.phase == 0 {
            if self.reordering {
                // An old-path packet moves the expected TAIL; the TAIL itself flushes at once.
                verdict.flush_at = Some(if is_tail {
                    now + Duration::from_ns(1)
                } else {
                    now + gap + params.flush_slack
                });
            }
        } else if early {
            verdict.hold = true;
            if !self.reordering {
                self.reordering = true;
                let from = if self.seen_phase0 {
                    self.phase0_arrived
                } else {
                    now
                };
                verdict.flush_at = Some((from + gap + params.flush_slack).max(now));
            }
        }
        verdict
    }

    /// The flow's reorder queue was flushed (by the TAIL or its deadline): the epoch is now in
    /// phase 1, and later new-path packets go straight on.
    pub fn on_flush(&mut self) {
        self.reordering = false;
        self.phase = 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: ConWeaveParams = ConWeaveParams::LEAF_SPINE;
    const RTT: Duration = Duration::from_us(4);

    fn us(t: u64) -> Time {
        Time::ZERO + Duration::from_us(t)
    }

    /// The source ToR sends packets at the given µs; the chooser offers path 5 (good) each
    /// time. Returns each packet's (path, epoch, phase, kind).
    fn send(tx: &mut TxFlow, at: &[u64]) -> Vec<(u8, u32, u8, TagKind)> {
        at.iter()
            .map(|&t| {
                let tag = tx.on_data(us(t), &P, RTT, || (5, true));
                (tag.path, tag.epoch, tag.phase, tag.kind)
            })
            .collect()
    }

    #[test]
    fn a_timely_reply_opens_a_new_epoch_on_the_same_path() {
        let mut tx = TxFlow::default();
        let mut first = TxFlow::default();
        first.on_data(us(0), &P, RTT, || (2, false));
        // A new flow takes the first candidate even when both are busy.
        assert_eq!(first.path(), 2);
        assert_eq!(
            send(&mut tx, &[10, 11]),
            [(5, 1, 0, TagKind::Init), (5, 1, 0, TagKind::Data)]
        );
        // The reply comes 6 µs after the INIT, within 4 + 4 µs.
        tx.on_reply(us(16), Reply::Rtt { epoch: 1 });
        let next = tx.on_data(us(17), &P, RTT, || panic!("a stable flow stays"));
        assert_eq!((next.path, next.epoch, next.kind), (5, 2, TagKind::Init));
    }

    /// No reply by 8 µs after the INIT: the first packet after that is the TAIL, on the old
    /// path in phase 0; the rest of the epoch takes the new path in phase 1, and carries the
    /// TAIL's send time; no second reroute in the epoch, however late; a late RTT reply is
    /// ignored, the CLEAR opens a new epoch.
    #[test]
    fn a_late_reply_reroutes_once_behind_a_tail() {
        let mut tx = TxFlow::default();
        tx.on_data(us(0), &P, RTT, || (1, true));
        assert_eq!(send(&mut tx, &[8]), [(1, 1, 0, TagKind::Data)]);
        let tail = tx.on_data(us(9), &P, RTT, || (6, true));
        assert_eq!((tail.path, tail.phase, tail.kind), (1, 0, TagKind::Tail));
        assert_eq!(tail.tail_sent, us(9));
        let next = tx.on_data(us(10), &P, RTT, || panic!("one reroute per epoch"));
        assert_eq!((next.path, next.phase, next.kind), (6, 1, TagKind::Data));
        assert_eq!(next.tail_sent, us(9));
        tx.on_reply(us(11), Reply::Rtt { epoch: 1 });
        assert_eq!(send(&mut tx, &[100]), [(6, 1, 1, TagKind::Data)]);
        tx.on_reply(us(101), Reply::Clear { epoch: 1 });
        assert_eq!(send(&mut tx, &[102]), [(6, 2, 0, TagKind::Init)]);
    }

    /// Both candidates busy at the timeout: the TAIL and phase 1 happen, the path stays.
    #[test]
    fn a_reroute_with_every_candidate_busy_keeps_the_path() {
        let mut tx = TxFlow::default();
        tx.on_data(us(0), &P, RTT, || (1, true));
        let tail = tx.on_data(us(20), &P, RTT, || (3, false));
        assert_eq!(tail.kind, TagKind::Tail);
        assert_eq!(send(&mut tx, &[21]), [(1, 1, 1, TagKind::Data)]);
    }

    /// After θ_inactive (300 µs) of silence the next packet opens a new epoch on a newly chosen
    /// path; with every candidate busy it keeps the old one.
    #[test]
    fn silence_opens_a_new_epoch_on_a_new_path() {
        let mut tx = TxFlow::default();
        tx.on_data(us(0), &P, RTT, || (1, true));
        // 300 µs after the last packet is not yet silence (ns-3 compares strictly): the
        // overdue reply makes this the TAIL.
        assert_eq!(send(&mut tx, &[300]), [(1, 1, 0, TagKind::Tail)]);
        let after = tx.on_data(us(601), &P, RTT, || (4, true));
        assert_eq!((after.path, after.epoch, after.kind), (4, 2, TagKind::Init));
        let busy = tx.on_data(us(902), &P, RTT, || (7, false));
        assert_eq!((busy.path, busy.epoch), (4, 3));
    }

    /// A failed path moves a flow in mid-epoch: same epoch and phase, no TAIL. A flow yet to
    /// send, or silent past θ_inactive, is left to choose its path itself.
    #[test]
    fn a_failed_path_moves_the_flow_silently() {
        let mut tx = TxFlow::default();
        assert!(!tx.move_off_failed(us(0), &P, 3));
        tx.on_data(us(0), &P, RTT, || (1, true));
        assert!(tx.move_off_failed(us(2), &P, 3));
        assert_eq!(send(&mut tx, &[3]), [(3, 1, 0, TagKind::Data)]);
        // Past the reply deadline: the TAIL goes on the path the flow was moved to.
        assert_eq!(send(&mut tx, &[20]), [(3, 1, 0, TagKind::Tail)]);
        assert!(tx.move_off_failed(us(21), &P, 2));
        assert_eq!(send(&mut tx, &[22]), [(2, 1, 1, TagKind::Data)]);
        assert!(!tx.move_off_failed(us(400), &P, 6));
        assert_eq!(send(&mut tx, &[400]), [(5, 2, 0, TagKind::Init)]);
    }

    /// One candidate per group, inside it, the same for a flow every time; over many flows,
    /// every queue of a group is someone's candidate.
    #[test]
    fn reorder_queue_candidates_are_one_hashed_queue_per_group() {
        let of = |flow| candidate_queues(flow, 12, 3).collect::<Vec<_>>();
        for flow in 0..100 {
            let c = of(flow);
            assert_eq!(c.len(), 3);
            for (g, &q) in c.iter().enumerate() {
                assert!((g * 4..g * 4 + 4).contains(&q), "{flow}: {c:?}");
            }
            assert_eq!(c, of(flow));
        }
        let mut seen = [false; 12];
        (0..100).flat_map(of).for_each(|q| seen[q] = true);
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn the_pick_skips_busy_paths() {
        let busy = [false, true, true];
        let free = |i: usize| !busy[i];
        assert_eq!(pick((0, 1), free), (0, true));
        assert_eq!(pick((1, 0), free), (0, true));
        assert_eq!(pick((1, 2), free), (1, false));
        assert_eq!(pick((2, 2), free), (2, false));
    }

    fn tag(epoch: u32, phase: u8, kind: TagKind, sent: u64, tail_sent: u64) -> Tag {
        Tag {
            path: 0,
            epoch,
            phase,
            kind,
            sent: us(sent),
            tail_sent: us(tail_sent),
        }
    }

    /// (arrival µs, tag) → (hold, flush at µs, reply): the destination's side of a reroute.
    /// Old-path packets sent at 0 and 2 µs arrive at 5 and 7; the TAIL, sent at 20 µs, is slow;
    /// new-path packets sent from 21 µs arrive first and are held until the expected TAIL
    /// arrival (the last old-path arrival, 7, plus the send gap 20 − 2, plus 16 of slack = 41
    /// µs); the TAIL arrives at 30 and flushes them 1 ns later, and is answered by a CLEAR.
    #[test]
    fn new_path_packets_wait_for_the_tail() {
        let mut rx = RxFlow::default();
        let in_us = |t: Time| t.as_ps() as f64 / 1e6;
        let cases = [
            (
                5,
                tag(1, 0, TagKind::Init, 0, 0),
                (false, None, Some(Reply::Rtt { epoch: 1 })),
            ),
            (7, tag(1, 0, TagKind::Data, 2, 0), (false, None, None)),
            (
                24,
                tag(1, 1, TagKind::Data, 21, 20),
                (true, Some(41.0), None),
            ),
            (25, tag(1, 1, TagKind::Data, 22, 20), (true, None, None)),
            (
                30,
                tag(1, 0, TagKind::Tail, 20, 20),
                (false, Some(30.001), Some(Reply::Clear { epoch: 1 })),
            ),
        ];
        for (at, tag, want) in cases {
            let v = rx.on_data(us(at), &P, &tag);
            assert_eq!((v.hold, v.flush_at.map(in_us), v.reply), want, "at {at} µs");
            assert!(v.may_notify);
        }
        rx.on_flush();
        // After the flush, new-path packets go straight on.
        let v = rx.on_data(us(31), &P, &tag(1, 1, TagKind::Data, 23, 20));
        assert!(!v.hold && v.flush_at.is_none());
    }

    /// The TAIL is lost: the queue's deadline flushes it, the epoch turns to phase 1, and a
    /// packet of an earlier epoch goes straight on unanswered.
    #[test]
    fn the_deadline_flushes_when_the_tail_is_lost() {
        let mut rx = RxFlow::default();
        rx.on_data(us(5), &P, &tag(1, 0, TagKind::Init, 0, 0));
        let held = rx.on_data(us(24), &P, &tag(1, 1, TagKind::Data, 21, 20));
        assert_eq!(held.flush_at, Some(us(5 + 20 + 16)));
        rx.on_flush();
        let v = rx.on_data(us(50), &P, &tag(1, 1, TagKind::Data, 40, 20));
        assert!(!v.hold);
        rx.on_data(us(60), &P, &tag(2, 0, TagKind::Init, 55, 0));
        let old = rx.on_data(us(61), &P, &tag(1, 1, TagKind::Data, 41, 20));
        assert_eq!((old.hold, old.reply, old.may_notify), (false, None, false));
    }

    /// A new epoch whose first packet to arrive is a new-path one (no old-path history): held
    /// for θ_default_wait + slack.
    #[test]
    fn without_history_the_queue_waits_the_default() {
        let mut rx = RxFlow::default();
        let v = rx.on_data(us(10), &P, &tag(3, 1, TagKind::Data, 8, 6));
        assert_eq!((v.hold, v.flush_at), (true, Some(us(10 + 200 + 16))));
    }
}
