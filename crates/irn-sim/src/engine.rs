//! The discrete-event core: a queue of compact events ordered by `(time, insertion sequence)`.
//!
//! Ties break first-in first-out, so two runs that schedule the same events in the same order
//! pop them in the same order: the whole simulation is deterministic without any tie-breaking
//! rule in the model. Components follow htsim's rule of at most one pending event per busy
//! component (a port schedules only its wake-up, a link only its head packet's arrival), so the
//! queue holds a few events per port, not one per packet in flight.
//!
//! The queue is a calendar queue (a timing wheel): nearly every event lands a serialization
//! time or a link delay ahead, so events are dropped into fixed-width time buckets, and popping
//! walks the buckets in order. A binary heap spent most of its time on mispredicted branches
//! sifting through ~1000 entries (41 % of a default-scenario profile). Events beyond the wheel's
//! horizon (retransmission timers, far-off flow arrivals) wait in a heap and move into the wheel
//! as it turns.
//!
//! Buckets are narrow (a few events each) and kept in order as events are inserted: an event
//! goes behind every event of its bucket with the same or an earlier time, which is a plain push
//! for most events and a short shift for the rest. That keeps FIFO order among equal times with
//! no sequence numbers in the wheel (16-byte entries, one `u64` comparison) and no sorting when
//! a bucket is served. Events from the heap move in before any later-scheduled event can land
//! in their bucket (the bucket was beyond the horizon until that move), so they keep their
//! place too.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use irn_core::{Duration, Time};

use crate::ids::{FlowId, PortId};

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The port finished serializing its packet and has more to send.
    TxDone(PortId),
    /// The head packet on the link leaving this port reaches the port at the other end (its
    /// last bit is in).
    Arrive(PortId),
    /// A PFC frame reaches this port from its peer: stop (`pause`) or resume sending data.
    Pfc { port: PortId, pause: bool },
    /// A flow's sender timer may have expired.
    Timer(FlowId),
    /// The next flow of the workload starts.
    FlowArrival,
}

const _: () = assert!(std::mem::size_of::<Event>() <= 8);

/// An event in the wheel.
#[derive(Debug, Clone, Copy)]
struct Slot {
    time: Time,
    event: Event,
}

/// An event in the overflow heap, which needs the sequence number to keep FIFO order.
#[derive(Debug, Clone, Copy)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl Entry {
    /// The total order: time, then scheduling order, as one integer (one comparison).
    fn key(&self) -> u128 {
        (u128::from(self.time.as_ps()) << 64) | u128::from(self.seq)
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// Number of buckets in the wheel (a power of two).
const BUCKETS: usize = 4096;
const WORDS: usize = BUCKETS / 64;

/// A min-queue of events by time, FIFO among equal times.
#[derive(Debug)]
pub struct EventQueue {
    /// Bucket width is `2^shift` picoseconds.
    shift: u32,
    /// `buckets[b % BUCKETS]` holds the events of absolute bucket `b`, for `b` within
    /// `cur..cur + BUCKETS`, in (time, scheduling) order.
    /// (A fixed-size array, so indexing by `b % BUCKETS` needs no bounds check.)
    buckets: Box<[Vec<Slot>; BUCKETS]>,
    /// Which buckets hold events, to skip empty stretches in one step.
    occupied: [u64; WORDS],
    /// The absolute bucket being served; its events before `cur_pos` are already popped.
    cur: u64,
    cur_pos: usize,
    in_wheel: usize,
    /// Events beyond the wheel's horizon, earliest first...
    overflow: BinaryHeap<Reverse<Entry>>,
    /// ...and the absolute bucket of the earliest (`u64::MAX` when there is none), so turning
    /// the wheel checks the heap with one comparison.
    overflow_next: u64,
    /// Scheduling order of the heap's events.
    seq: u64,
    popped: u64,
}

impl EventQueue {
    /// A queue whose buckets are about `width` wide (rounded down to a power of two
    /// picoseconds). A good width is a fraction of the shortest packet serialization time, so a
    /// bucket holds a few dozen events.
    pub fn new(width: Duration) -> Self {
        let shift = 63 - width.as_ps().max(1).leading_zeros();
        EventQueue {
            shift,
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; WORDS],
            cur: 0,
            cur_pos: 0,
            in_wheel: 0,
            overflow: BinaryHeap::new(),
            overflow_next: u64::MAX,
            seq: 0,
            popped: 0,
        }
    }

    fn bucket_of(&self, time: Time) -> u64 {
        time.as_ps() >> self.shift
    }

    /// Schedules `event` at `time`, which must not be before the last popped event.
    #[inline(always)]
    pub fn schedule(&mut self, time: Time, event: Event) {
        let b = self.bucket_of(time).max(self.cur);
        if b >= self.cur + BUCKETS as u64 {
            self.seq += 1;
            self.overflow.push(Reverse(Entry {
                time,
                seq: self.seq,
                event,
            }));
            self.overflow_next = self.overflow_next.min(b);
        } else {
            self.put(b, Slot { time, event });
        }
    }

    /// Inserts into bucket `b` behind every event of the same or an earlier time. Events already
    /// popped from the bucket being served are no later than `e` (time never goes back), so the
    /// insertion point is always behind them.
    #[inline(always)]
    fn put(&mut self, b: u64, e: Slot) {
        let i = (b % BUCKETS as u64) as usize;
        let bucket = &mut self.buckets[i];
        if bucket.last().is_none_or(|last| last.time <= e.time) {
            bucket.push(e);
        } else {
            let at = bucket.partition_point(|x| x.time <= e.time);
            bucket.insert(at, e);
        }
        self.occupied[i / 64] |= 1 << (i % 64);
        self.in_wheel += 1;
    }

    /// The earliest event, removed from the queue.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        // The common case, inlined into the event loop: the bucket being served has another
        // event.
        let i = (self.cur % BUCKETS as u64) as usize;
        if self.cur_pos < self.buckets[i].len() {
            return Some(self.take(i));
        }
        self.pop_slow()
    }

    /// Takes the next event of the bucket being served (`i`, not exhausted).
    #[inline(always)]
    fn take(&mut self, i: usize) -> (Time, Event) {
        let bucket = &mut self.buckets[i];
        let e = bucket[self.cur_pos];
        self.cur_pos += 1;
        if self.cur_pos == bucket.len() {
            bucket.clear();
            self.cur_pos = 0;
            self.occupied[i / 64] &= !(1 << (i % 64));
        }
        self.in_wheel -= 1;
        self.popped += 1;
        (e.time, e.event)
    }

    /// [`pop`](Self::pop) when the bucket being served is exhausted: turn the wheel to the next
    /// occupied bucket, moving heap events that come within the horizon into the wheel.
    #[inline(never)]
    fn pop_slow(&mut self) -> Option<(Time, Event)> {
        if self.in_wheel > 0 {
            let i = (self.cur % BUCKETS as u64) as usize;
            self.cur += self.distance_to_next_occupied(i);
        } else if self.overflow_next != u64::MAX {
            self.cur = self.overflow_next.max(self.cur);
        } else {
            return None;
        }
        self.cur_pos = 0;
        // Every heap event lay beyond the old horizon, so at or after the new `cur`.
        let horizon = self.cur + BUCKETS as u64;
        while self.overflow_next < horizon {
            let Some(Reverse(e)) = self.overflow.pop() else {
                break;
            };
            self.put(
                self.bucket_of(e.time).max(self.cur),
                Slot {
                    time: e.time,
                    event: e.event,
                },
            );
            self.overflow_next = self
                .overflow
                .peek()
                .map_or(u64::MAX, |Reverse(next)| self.bucket_of(next.time));
        }
        let i = (self.cur % BUCKETS as u64) as usize;
        Some(self.take(i))
    }

    /// Buckets from the (empty) bucket `i` to the next occupied one, cyclically; the wheel is
    /// known to hold at least one event.
    fn distance_to_next_occupied(&self, i: usize) -> u64 {
        let (word, bit) = (i / 64, i % 64);
        let here = self.occupied[word] & (u64::MAX << bit);
        if here != 0 {
            return (here.trailing_zeros() as usize - bit) as u64;
        }
        for step in 1..=WORDS {
            let w = (word + step) % WORDS;
            if self.occupied[w] != 0 {
                let target = w * 64 + self.occupied[w].trailing_zeros() as usize;
                return ((target + BUCKETS - i) % BUCKETS) as u64;
            }
        }
        1
    }

    /// The next event, if it is in the bucket being served (a cheap look-ahead for prefetching).
    #[inline(always)]
    pub fn peek_near(&self) -> Option<Event> {
        let i = (self.cur % BUCKETS as u64) as usize;
        self.buckets[i].get(self.cur_pos).map(|s| s.event)
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.in_wheel + self.overflow.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn earliest_first_then_fifo() {
        let mut q = EventQueue::new(Duration::from_ps(4));
        let t = Time::from_ps;
        q.schedule(t(5), Event::TxDone(PortId(1)));
        q.schedule(t(3), Event::TxDone(PortId(2)));
        q.schedule(t(5), Event::TxDone(PortId(3)));
        q.schedule(t(3), Event::FlowArrival);
        q.schedule(t(1_000_000), Event::Timer(FlowId(4))); // beyond the horizon
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (t(3), Event::TxDone(PortId(2))),
                (t(3), Event::FlowArrival),
                (t(5), Event::TxDone(PortId(1))),
                (t(5), Event::TxDone(PortId(3))),
                (t(1_000_000), Event::Timer(FlowId(4))),
            ]
        );
        assert_eq!(q.processed(), 5);
        assert!(q.is_empty());
    }

    proptest! {
        /// Against a plain ordered reference: interleaved schedules (never in the past) and pops
        /// come out in (time, scheduling order), across bucket edges, wheel wrap-around and the
        /// overflow heap.
        #[test]
        fn matches_a_sorted_reference(
            width_ps in 1u64..5000,
            ops in prop::collection::vec((0u64..3, prop_oneof![4 => 0u64..2000, 1 => 0u64..50_000_000]), 1..400),
        ) {
            let mut q = EventQueue::new(Duration::from_ps(width_ps));
            let mut reference: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
            let mut now = 0u64;
            let mut seq = 0u64;
            for (op, delta) in ops {
                if op == 0 {
                    let got = q.pop();
                    let want = reference.pop();
                    match (got, want) {
                        (Some((t, Event::Timer(FlowId(s)))), Some(Reverse((wt, ws)))) => {
                            prop_assert_eq!((t.as_ps(), u64::from(s)), (wt, ws));
                            now = t.as_ps();
                        }
                        (None, None) => {}
                        (g, w) => prop_assert!(false, "got {:?}, want {:?}", g, w),
                    }
                } else {
                    seq += 1;
                    q.schedule(Time::from_ps(now + delta), Event::Timer(FlowId(seq as u32)));
                    reference.push(Reverse((now + delta, seq)));
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(Reverse((wt, ws))) = reference.pop() {
                let (t, e) = q.pop().unwrap();
                prop_assert_eq!((t.as_ps(), e), (wt, Event::Timer(FlowId(ws as u32))));
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
