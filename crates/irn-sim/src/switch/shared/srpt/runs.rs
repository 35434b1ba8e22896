//! The order of an SRPT output's queue, kept as it changes so that the output pops its front as
//! a FIFO output does.
//!
//! Each flow's queued packets form one *run*, in arrival order, each ranked no worse than the
//! packets ahead of it (a flow's rank never rises), so a run's best rank is its last packet's and
//! stays as its front leaves. The runs are sorted by their best rank (ties: the run queued first
//! goes first). An arriving packet joins the end of its flow's run, which moves forward past
//! every run whose best rank is now worse than its own. Eviction keeps this order: it takes the
//! worst-ranked packets first, so a run loses its best packet only with the rest of it (or keeps
//! one of equal rank).
//!
//! Ranked per packet, every run is one packet: the runs are then the queue's packets sorted by
//! rank, and an arrival walks the queue's packets.
//!
//! The packets themselves stay in the output's linked queue; [`Runs`] indexes it by run, so an
//! arrival costs a walk over the queue's flows rather than its packets. The output's dequeue
//! does not tell the index: the index catches up on the next arrival, from the bytes the
//! output still holds (its packets leave from the front, in order).

use std::collections::VecDeque;

use crate::ids::FlowId;
use crate::packets::{Fifo, PacketId, Packets};

/// A run of one flow's packets.
#[derive(Debug, Clone, Copy)]
struct Run {
    flow: FlowId,
    first: PacketId,
    last: PacketId,
    /// Its best (lowest) rank: its last packet's.
    best: u64,
    /// Its packets' wire bytes.
    bytes: u64,
}

/// One SRPT output's runs, front to back.
#[derive(Debug)]
pub(super) struct Runs {
    runs: VecDeque<Run>,
    /// Bytes of the runs together, as of the last arrival.
    bytes: u64,
    /// Each packet its own run, ranked alone.
    per_packet: bool,
}

impl Runs {
    pub(super) fn new(per_packet: bool) -> Self {
        Runs {
            runs: VecDeque::new(),
            bytes: 0,
            per_packet,
        }
    }

    /// The place of `flow`'s run, if it has one to join.
    fn run_of(&self, flow: FlowId) -> Option<usize> {
        if self.per_packet {
            return None;
        }
        self.runs.iter().position(|r| r.flow == flow)
    }

    /// Forgets the packets the output sent since the index last changed: `queued` is the data
    /// bytes it holds now, so the difference left from the front.
    fn catch_up(&mut self, q: &Fifo, packets: &Packets, queued: u64) {
        let mut sent = self.bytes - queued;
        while sent > 0 {
            let front = self.runs.front_mut().expect("sent bytes were queued");
            if front.bytes > sent {
                front.bytes -= sent;
                break;
            }
            sent -= front.bytes;
            self.runs.pop_front();
        }
        if let Some(front) = self.runs.front_mut() {
            front.first = packets.front(q).expect("a run is queued");
        }
        self.bytes = queued;
    }

    /// The rank a packet of `flow` whose own is `own` takes in the queue: its own, or its
    /// flow's queued best if better. `queued`: the output's data bytes, without the packet.
    pub(super) fn rank(
        &mut self,
        (q, packets): (&Fifo, &Packets),
        queued: u64,
        (flow, own): (FlowId, u64),
    ) -> u64 {
        self.catch_up(q, packets, queued);
        self.run_of(flow)
            .map_or(own, |i| own.min(self.runs[i].best))
    }

    /// Queues packet `p`, whose own rank is `own`, in `q` in SRPT's order and ranks it in its
    /// slot. `queued`: the output's data bytes, without `p`.
    pub(super) fn enqueue(
        &mut self,
        (q, packets): (&mut Fifo, &mut Packets),
        queued: u64,
        p: PacketId,
        own: u64,
    ) {
        self.catch_up(q, packets, queued);
        let (flow, bytes) = {
            let pkt = packets.get(p);
            (pkt.flow, u64::from(pkt.wire_bytes))
        };
        self.bytes += bytes;
        let (run, from) = match self.run_of(flow) {
            Some(i) => {
                let mut run = self.runs.remove(i).expect("found");
                let prev = i.checked_sub(1).map(|j| self.runs[j].last);
                packets.insert_run(q, Some(run.last), (p, p));
                packets.unlink_run(q, prev, (run.first, p));
                run.last = p;
                run.best = run.best.min(own);
                run.bytes += bytes;
                (run, i)
            }
            None => {
                let run = Run {
                    flow,
                    first: p,
                    last: p,
                    best: own,
                    bytes,
                };
                (run, self.runs.len())
            }
        };
        packets.set_rank(p, run.best);
        // The run's place: after every run ahead of it that ranks no worse.
        let to = self
            .runs
            .range(..from)
            .take_while(|r| r.best <= run.best)
            .count();
        let after = to.checked_sub(1).map(|j| self.runs[j].last);
        packets.insert_run(q, after, (run.first, run.last));
        self.runs.insert(to, run);
    }

    /// Indexes `q` afresh, after packets were taken from its middle.
    pub(super) fn rebuild(&mut self, q: &Fifo, packets: &Packets) {
        self.runs.clear();
        self.bytes = 0;
        let mut cur = packets.front(q);
        while let Some(id) = cur {
            let pkt = packets.get(id);
            let bytes = u64::from(pkt.wire_bytes);
            self.bytes += bytes;
            match self.runs.back_mut() {
                Some(run) if run.flow == pkt.flow && !self.per_packet => {
                    run.last = id;
                    run.best = run.best.min(packets.rank(id));
                    run.bytes += bytes;
                }
                _ => self.runs.push_back(Run {
                    flow: pkt.flow,
                    first: id,
                    last: id,
                    best: packets.rank(id),
                    bytes,
                }),
            }
            cur = packets.next(id);
        }
    }
}
