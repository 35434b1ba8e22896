//! The discrete-event core: a queue of compact events ordered by `(time, insertion sequence)`.
//!
//! Ties break first-in first-out, so two runs that schedule the same events in the same order
//! pop them in the same order: the whole simulation is deterministic without any tie-breaking
//! rule in the model. Components follow htsim's rule of at most one pending event per busy
//! component (a port schedules only its current packet's end, a link only its head packet's
//! arrival), so the queue holds a few events per port, not one per packet in flight.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use irn_core::Time;

use crate::ids::{FlowId, PortId};

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The port finished serializing its packet and may start the next.
    TxDone(PortId),
    /// The head packet on the link leaving this port reaches the port at the other end.
    Arrive(PortId),
    /// A PFC frame reaches this port from its peer: stop (`pause`) or resume sending data.
    Pfc { port: PortId, pause: bool },
    /// A flow's sender timer may have expired.
    Timer(FlowId),
    /// The next flow of the workload starts.
    FlowArrival,
}

const _: () = assert!(std::mem::size_of::<Event>() <= 8);

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap pops the earliest (then first-scheduled) entry.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// A min-queue of events by time, FIFO among equal times.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            seq: 0,
            popped: 0,
        }
    }

    pub fn schedule(&mut self, time: Time, event: Event) {
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
    }

    /// The earliest event, removed from the queue.
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some((e.time, e.event))
    }

    /// When the earliest event is due.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_fifo() {
        let mut q = EventQueue::default();
        let t = Time::from_ps;
        q.schedule(t(5), Event::TxDone(PortId(1)));
        q.schedule(t(3), Event::TxDone(PortId(2)));
        q.schedule(t(5), Event::TxDone(PortId(3)));
        q.schedule(t(3), Event::FlowArrival);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (t(3), Event::TxDone(PortId(2))),
                (t(3), Event::FlowArrival),
                (t(5), Event::TxDone(PortId(1))),
                (t(5), Event::TxDone(PortId(3))),
            ]
        );
        assert_eq!(q.processed(), 4);
    }
}
