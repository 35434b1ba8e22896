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
//! sifting through ~1000 entries (41 % of a default-scenario profile).
//!
//! The wheel has two tiers, so what it touches stays in cache. Fine buckets (a few hundred
//! picoseconds: usually one event, rarely more than three) cover a window of two coarse buckets
//! (each `SPAN` fine ones), the one being served and the next. Beyond the window, a ring of
//! coarse buckets (at least `COARSE`, more when the horizon asked for needs them) takes events
//! by appending them to a chain of chunks, unsorted; when the window slides on by a coarse
//! bucket, that bucket's events move into the fine buckets in one pass and its chunks go back
//! to a pool shared by every coarse bucket, which hands out the last one freed first. Events
//! beyond the ring (retransmission timers, far-off flow arrivals) wait in a heap and move into
//! the ring as it turns. A link's arrivals, a link delay ahead, thus go to a chunk that is hot
//! in cache, instead of to a fine bucket last touched a wheel turn ago: with one flat wheel of
//! 8192 fine buckets (512 KB) spanning the link delay, every such event missed the 1 MB L2
//! cache (the `Arrive` events' bucket was the largest single stall in the profile); with a 64
//! KB window, L2 misses halved. The window is now 128 KB. How many frame times it spans depends
//! on the bucket width the simulation picks: with buckets a 256th of a frame, a 64 KB window (a
//! coarse bucket two frames) sent 14 % of the leaf-spine's events through the ring, which cost
//! more than 128 KB's cache misses (replaying a recorded event trace through the queue alone:
//! 13.9 → 12.8 ns per event); buckets half as wide, with the window back at two frames, avoid
//! more out-of-order inserts than the extra ring passes cost (2–3 % faster).
//!
//! Fine buckets are kept in order as events are inserted: an event goes behind every event of
//! its bucket with the same or an earlier time, which is a plain append for most events and a
//! short shift for the rest. That keeps FIFO order among equal times with no sequence numbers in
//! the wheel (16-byte entries, one `u64` comparison) and no sorting when a bucket is served.
//! Narrow buckets make out-of-order inserts, whose branch the processor cannot predict, rare;
//! the price, more empty buckets to skip, is a bit scan of the `occupied` bitmap. Events from the
//! ring move in before any later-scheduled event can land in their bucket (the bucket was beyond
//! the window until that move), and the heap's into the ring likewise, so they keep their place
//! too.
//!
//! Storage is flat: each fine bucket holds its first `SLOTS` events in place, in one 64-byte
//! cache line of one array, with the counts in a dense byte array beside it, so scheduling or
//! popping touches one line of events and no pointer to a separate allocation. The rare event
//! beyond a full bucket's slots goes to that bucket's spill vector, which continues the bucket's
//! order. Popping checks one count per event; a bucket is emptied only when the wheel turns past
//! it. (Measured against a vector per bucket, which cost a header load, a second cache line and
//! two unpredictable "bucket exhausted?" branches per event: about 5 % fewer instructions plus
//! weighted cache misses and mispredicts for the whole simulator.)

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint;

use irn_core::{Duration, Time};

use crate::credits::Wire;
use crate::ids::{FlowId, PortId};

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The port finished serializing its packet and has more to send.
    TxDone(PortId),
    /// The head packet on the link leaving this port reaches the port at the other end (its
    /// last bit is in).
    Arrive(PortId),
    /// A PAUSE frame reaches this port from its peer: a [`PauseFrame`](crate::pause::PauseFrame)
    /// packed as its `to_parts` (an `xoff` without a timer, or a time in `quanta`; 0 resumes).
    Pfc {
        port: PortId,
        quanta: u16,
        xoff: bool,
    },
    /// The pause a timed PAUSE frame set on this port may have run out.
    PauseEnd(PortId),
    /// The switch input behind this port may have to refresh its timed PAUSE upstream.
    PauseRefresh(PortId),
    /// The `[[pause_control]]` rule of this index looks at its input's buffer.
    PauseControl(u32),
    /// The `[pauses]` host of this index sends its next PAUSE frame.
    PauseSource(u32),
    /// A flow-control packet's credit limit reaches the sender of the credit-limited link
    /// leaving this port.
    CreditLimit { port: PortId, fccl: Wire },
    /// A flow-control packet's FCTBS reaches the receiver of the credit-limited link leaving
    /// this port, which resynchronizes its ABR.
    CreditSync { port: PortId, fctbs: Wire },
    /// A pause-equivalent grant of this many 64-byte blocks reaches the sender of the link
    /// leaving this port, replacing its allowance (only with `credit_rule = "pause-equivalent"`).
    CreditGrant { port: PortId, blocks: u16 },
    /// This port sends its periodic flow-control packet (only with credits).
    CreditTick(PortId),
    /// A flow's sender timer may have expired.
    Timer(FlowId),
    /// The next flow of the workload starts.
    FlowArrival,
    /// This flow starts, and the next one from its partition's hosts is scheduled (only in a
    /// partitioned run: [`crate::partition`]).
    FlowStart(FlowId),
    /// A flow whose parents have all finished starts (only with dependent flows).
    FlowRelease(FlowId),
    /// Every NIC's ordering memory is sampled (only with an ordering layer).
    Sample,
    /// `[monitor]` takes its sample (only when configured).
    Monitor,
    /// Links fail or come back, or routing reconverges (only with `[failures]`).
    LinkChange,
    /// This flow's ConWeave reorder queue may flush (only with ConWeave).
    Reorder(FlowId),
}

/// Where an event happens, for the queues that group events by where (partitions, nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// At this port's node.
    Port(PortId),
    /// At the node at the far end of this port's link.
    Peer(PortId),
    /// At this flow's source host.
    Source(FlowId),
}

impl Event {
    /// Where this event happens; `None` for what reads or changes the whole network at an
    /// instant, or ties nodes together (ConWeave's reorder queues, dependent flows' releases).
    #[inline(always)]
    pub fn place(self) -> Option<Place> {
        Some(match self {
            Event::TxDone(p)
            | Event::Pfc { port: p, .. }
            | Event::PauseEnd(p)
            | Event::PauseRefresh(p)
            | Event::CreditTick(p)
            | Event::CreditLimit { port: p, .. }
            | Event::CreditGrant { port: p, .. } => Place::Port(p),
            Event::Arrive(p) | Event::CreditSync { port: p, .. } => Place::Peer(p),
            Event::Timer(f) | Event::FlowStart(f) => Place::Source(f),
            Event::PauseControl(_)
            | Event::PauseSource(_)
            | Event::FlowArrival
            | Event::FlowRelease(_)
            | Event::Sample
            | Event::Monitor
            | Event::LinkChange
            | Event::Reorder(_) => return None,
        })
    }
}

/// Which of the run's samplers a sample event is for; each keeps its own interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampler {
    /// Every NIC's ordering memory, for the summary (with an ordering layer).
    Ordering,
    /// `[monitor]`'s time series.
    Monitor,
}

impl Sampler {
    /// The event that takes this sampler's next sample.
    pub fn event(self) -> Event {
        match self {
            Sampler::Ordering => Event::Sample,
            Sampler::Monitor => Event::Monitor,
        }
    }
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

/// Fine buckets per coarse bucket (a power of two, a multiple of 64 so a word of the
/// `occupied` bitmap never straddles two coarse buckets).
const SPAN: u64 = 1024;
/// Fine buckets in the window: the coarse bucket being served and the next one.
const FINE: usize = 2 * SPAN as usize;
const WORDS: usize = FINE / 64;
/// The fewest coarse buckets in the ring beyond the window: with the simulator's width (at most
/// a 512th of a full frame), a horizon of 64 to 128 full-frame times, past a datacenter link's
/// delay plus a frame. Narrower buckets (many ports) get more, up to the horizon the simulation
/// asks for ([`EventQueue::with_horizon`]).
const COARSE: usize = 64;
/// The most coarse buckets in the ring: the ring is an array of this many chains (48 KB of
/// headers, most never touched), so indexing it needs no bounds check.
const MAX_COARSE: usize = 4096;
/// Events a bucket holds in place (one cache line); more spill into a vector.
const SLOTS: usize = 4;
/// Events per chunk of a coarse bucket (eight cache lines).
const CHUNK: usize = 32;
/// No chunk: the end of a coarse bucket's chain.
const NO_CHUNK: u32 = u32::MAX;

/// A coarse bucket of the ring: a chain of chunks from a pool shared by the whole ring, in
/// scheduling order.
///
/// Chunks, not a vector per bucket: a vector keeps its memory for its bucket's next turn, a
/// ring's span later, by when a k = 24 fat-tree has touched megabytes and its lines are out of
/// cache, so every fourth event scheduled into the ring missed the cache on its write. A chunk
/// goes back to the pool as soon as its events move into the window, and the pool hands out the
/// last one freed first: the lines just read, still in cache.
#[derive(Debug, Clone, Copy)]
struct Coarse {
    /// The first chunk and the one being filled ([`NO_CHUNK`] when empty).
    head: u32,
    tail: u32,
    /// Events in the bucket.
    len: u32,
}

const EMPTY_COARSE: Coarse = Coarse {
    head: NO_CHUNK,
    tail: NO_CHUNK,
    len: 0,
};

/// A chunk's events, on cache lines of their own: their times and their events apart, so an
/// event is stored as the two words it is computed in. (As one 16-byte slot, the compiler built
/// it on the stack and copied it with one 16-byte load, which cannot be forwarded from the two
/// 8-byte stores before it and so waited for every earlier store to reach the cache: a sixth of
/// a k = 24 fat-tree's samples sat on that copy.)
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct Chunk {
    times: [Time; CHUNK],
    events: [Event; CHUNK],
}

const EMPTY_CHUNK: Chunk = Chunk {
    times: [Time::ZERO; CHUNK],
    events: [Event::FlowArrival; CHUNK],
};

/// The chunks every coarse bucket's events live in, and the free ones.
#[derive(Debug, Default)]
struct Chunks {
    events: Vec<Chunk>,
    /// The chunk after each one in its bucket's chain.
    next: Vec<u32>,
    /// Free chunks, the last freed on top.
    free: Vec<u32>,
}

impl Chunks {
    /// Appends `e` to coarse bucket `c`.
    #[inline(always)]
    fn push(&mut self, c: &mut Coarse, e: Slot) {
        let at = c.len as usize % CHUNK;
        if at == 0 {
            self.grow(c);
        }
        let chunk = &mut self.events[c.tail as usize];
        chunk.times[at] = e.time;
        chunk.events[at] = e.event;
        c.len += 1;
    }

    /// Chains a chunk to the end of `c`, the last one freed if any is free.
    #[inline(never)]
    fn grow(&mut self, c: &mut Coarse) {
        let chunk = self.free.pop().unwrap_or_else(|| {
            self.events.push(EMPTY_CHUNK);
            self.next.push(NO_CHUNK);
            (self.events.len() - 1) as u32
        });
        self.next[chunk as usize] = NO_CHUNK;
        if c.len == 0 {
            c.head = chunk;
        } else {
            self.next[c.tail as usize] = chunk;
        }
        c.tail = chunk;
    }
}

/// A bucket's first events, in (time, scheduling) order; slots past the bucket's count are
/// stale.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct Bucket([Slot; SLOTS]);

const EMPTY_SLOT: Slot = Slot {
    time: Time::ZERO,
    event: Event::FlowArrival,
};

/// A min-queue of events by time, FIFO among equal times.
#[derive(Debug)]
pub struct EventQueue {
    /// Fine bucket width is `2^shift` picoseconds.
    shift: u32,
    /// `buckets[b % FINE]` holds the first events of absolute fine bucket `b`, for `b` in the
    /// window (from the start of `cur`'s coarse bucket to `window_end`), and `lens[b % FINE]`
    /// how many (at most [`SLOTS`]); when that bucket is full, `spill[b % FINE]` holds the rest,
    /// in order.
    /// (Fixed-size arrays, so indexing by `b % FINE` needs no bounds check.)
    buckets: Box<[Bucket; FINE]>,
    lens: Box<[u8; FINE]>,
    spill: Box<[Vec<Slot>; FINE]>,
    /// Which fine buckets hold events, to skip empty stretches in one step.
    occupied: [u64; WORDS],
    /// The absolute fine bucket being served; its events before `cur_pos` (counting its slots,
    /// then its spill) are already popped. It is emptied when the wheel turns past it.
    cur: u64,
    cur_pos: usize,
    /// The end of the window, an absolute fine bucket: two coarse buckets past the start of
    /// the one `cur` is in.
    window_end: u64,
    /// `ring[c & ring_mask]` holds the events of absolute coarse bucket `c`, for `c` from
    /// `window_end / SPAN` up to `ring_end`, `ring_mask + 1` (a power of two) coarse buckets,
    /// in scheduling order, in `chunks`.
    ring: Box<[Coarse; MAX_COARSE]>,
    chunks: Chunks,
    ring_mask: usize,
    /// The first absolute coarse bucket past the ring, kept with `window_end`.
    ring_end: u64,
    /// Events in the ring, so an empty ring is known without looking.
    ring_len: usize,
    /// Events beyond the ring's horizon, earliest first...
    overflow: BinaryHeap<Reverse<Entry>>,
    /// ...and the absolute coarse bucket of the earliest (`u64::MAX` when there is none).
    overflow_next: u64,
    /// Events scheduled so far, which also orders the heap's events.
    scheduled: u64,
    popped: u64,
}

impl EventQueue {
    /// A queue whose fine buckets are about `width` wide (rounded down to a power of two
    /// picoseconds). A good width is a small fraction of the shortest packet serialization
    /// time, so a bucket rarely holds events out of scheduling order, and the window (`FINE`
    /// widths) covers a serialization.
    pub fn new(width: Duration) -> Self {
        Self::with_horizon(width, Duration::ZERO)
    }

    /// [`new`](Self::new), with a ring of coarse buckets that reaches at least `horizon` past
    /// the window, so events scheduled up to that far ahead skip the overflow heap.
    ///
    /// With buckets of a few picoseconds (a k = 24 fat-tree's), the minimal ring reaches only
    /// 256 ns, and 3 % of the events, those three frames or more ahead, went through the heap
    /// on their way to the ring.
    pub fn with_horizon(width: Duration, horizon: Duration) -> Self {
        let shift = 63 - width.as_ps().max(1).leading_zeros();
        let coarse = (horizon.as_ps() >> shift)
            .div_ceil(SPAN)
            .next_power_of_two()
            .clamp(COARSE as u64, MAX_COARSE as u64) as usize;
        EventQueue {
            shift,
            // Built on the heap: as stack temporaries, the arrays could overflow a thread's stack.
            buckets: boxed_array(Bucket([EMPTY_SLOT; SLOTS])),
            lens: boxed_array(0),
            spill: boxed_array(Vec::new()),
            occupied: [0; WORDS],
            cur: 0,
            cur_pos: 0,
            window_end: FINE as u64,
            ring: boxed_array(EMPTY_COARSE),
            chunks: Chunks::default(),
            ring_mask: coarse - 1,
            ring_end: FINE as u64 / SPAN + coarse as u64,
            ring_len: 0,
            overflow: BinaryHeap::new(),
            overflow_next: u64::MAX,
            scheduled: 0,
            popped: 0,
        }
    }

    fn bucket_of(&self, time: Time) -> u64 {
        time.as_ps() >> self.shift
    }

    /// Where in the ring absolute coarse bucket `c` goes (the constant mask tells the compiler
    /// the index is in bounds).
    #[inline(always)]
    fn ring_slot(&self, c: u64) -> usize {
        c as usize & self.ring_mask & (MAX_COARSE - 1)
    }

    /// Schedules `event` at `time`, which must not be before the last popped event.
    #[inline(always)]
    pub fn schedule(&mut self, time: Time, event: Event) {
        self.scheduled += 1;
        let b = self.bucket_of(time).max(self.cur);
        let e = Slot { time, event };
        if b < self.window_end {
            self.put(b, e);
        } else if b / SPAN < self.ring_end {
            let slot = self.ring_slot(b / SPAN);
            self.chunks.push(&mut self.ring[slot], e);
            self.ring_len += 1;
        } else {
            self.defer(e);
        }
    }

    /// Schedules an event beyond the ring's horizon on the heap.
    #[inline(never)]
    fn defer(&mut self, e: Slot) {
        self.overflow_next = self.overflow_next.min(self.bucket_of(e.time) / SPAN);
        self.overflow.push(Reverse(Entry {
            time: e.time,
            seq: self.scheduled,
            event: e.event,
        }));
    }

    /// Inserts into window bucket `b` behind every event of the same or an earlier time. Events
    /// already popped from the bucket being served are no later than `e` (time never goes
    /// back), so the insertion point is always behind them.
    #[inline(always)]
    fn put(&mut self, b: u64, e: Slot) {
        let i = (b % FINE as u64) as usize;
        let len = usize::from(self.lens[i]);
        // The last slot in place (a stale one when the bucket is empty), read unconditionally
        // so the common case takes one branch.
        let last = self.buckets[i].0[len.wrapping_sub(1) % SLOTS];
        if (len < SLOTS) & ((len == 0) | (last.time <= e.time)) {
            self.buckets[i].0[len % SLOTS] = e;
            self.lens[i] = len as u8 + 1;
        } else {
            self.put_sorted(i, e);
        }
        self.occupied[i / 64] |= 1 << (i % 64);
    }

    /// [`put`](Self::put) into bucket `i` when `e` goes before its last event or the bucket's
    /// slots are full: shift later events back a slot, the last slot's event (if full) to the
    /// front of the spill, or insert into the spill.
    #[inline(never)]
    fn put_sorted(&mut self, i: usize, e: Slot) {
        let len = usize::from(self.lens[i]);
        let slots = &mut self.buckets[i].0;
        let mut j = len;
        if len == SLOTS {
            let spill = &mut self.spill[i];
            if slots[SLOTS - 1].time <= e.time {
                let at = spill.partition_point(|x| x.time <= e.time);
                spill.insert(at, e);
                return;
            }
            spill.insert(0, slots[SLOTS - 1]);
            j = SLOTS - 1;
        } else {
            self.lens[i] += 1;
        }
        while j > 0 && slots[j - 1].time > e.time {
            slots[j] = slots[j - 1];
            j -= 1;
        }
        slots[j] = e;
    }

    /// The earliest event, removed from the queue.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.pop_until::<false>(Time::MAX)
    }

    /// The earliest event if it is before `limit`, removed from the queue; otherwise `None`,
    /// and the queue is left as it was.
    #[inline]
    pub fn pop_before(&mut self, limit: Time) -> Option<(Time, Event)> {
        self.pop_until::<true>(limit)
    }

    /// [`pop`](Self::pop), or with `BOUNDED` [`pop_before`](Self::pop_before): one body, the
    /// bound's test compiled out of the plain pop.
    #[inline(always)]
    fn pop_until<const BOUNDED: bool>(&mut self, limit: Time) -> Option<(Time, Event)> {
        // The common cases, inlined into the event loop and without a branch between them:
        // the bucket being served has another event in place, or it is done and the next
        // occupied bucket shares its bitmap word. Which of the two is a coin toss for the
        // branch predictor (a bucket holds one or two events), so both are computed and one is
        // selected.
        let i = (self.cur % FINE as u64) as usize;
        let pos = self.cur_pos;
        let len = usize::from(self.lens[i]);
        let (word, bit) = (i / 64, i % 64);
        let bits = self.occupied[word];
        let later = bits & (u64::MAX << bit) & !(1 << bit);
        let more = pos < len;
        // Rare: the bucket spilled (its spill may hold more), or the wheel must turn further.
        if !more && ((len == SLOTS) | (later == 0)) {
            if BOUNDED {
                // Turned to the next event, if any before the limit's bucket; the plain pop
                // then takes it in place.
                return match self.next_time_by::<true>(self.bucket_of(limit)) {
                    Some(t) if t < limit => self.pop(),
                    _ => None,
                };
            }
            return self.pop_slow();
        }
        let step = u64::from(later.trailing_zeros()) - bit as u64;
        let (next, at) = hint::select_unpredictable(more, (i, pos), (i + step as usize, 0));
        if BOUNDED && self.buckets[next % FINE].0[at % SLOTS].time >= limit {
            return None;
        }
        // Leaving the bucket empties it.
        self.lens[i] = hint::select_unpredictable(more, len as u8, 0);
        self.occupied[word] = hint::select_unpredictable(more, bits, bits & !(1 << bit));
        self.cur += hint::select_unpredictable(more, 0, step);
        self.cur_pos = at + 1;
        self.popped += 1;
        let e = self.buckets[next % FINE].0[at % SLOTS];
        Some((e.time, e.event))
    }

    /// [`pop`](Self::pop) when the bucket being served has no more events in place: serve its
    /// spilled events, then empty it and turn the wheel to the next occupied bucket.
    #[inline(never)]
    fn pop_slow(&mut self) -> Option<(Time, Event)> {
        let i = (self.cur % FINE as u64) as usize;
        if self.cur_pos >= SLOTS {
            if let Some(&e) = self.spill[i].get(self.cur_pos - SLOTS) {
                self.cur_pos += 1;
                self.popped += 1;
                return Some((e.time, e.event));
            }
            self.spill[i].clear();
        }
        self.lens[i] = 0;
        let (word, bit) = (i / 64, i % 64);
        self.occupied[word] &= !(1 << bit);
        // The common case: the next occupied bucket shares the bitmap word (and so the coarse
        // bucket).
        let here = self.occupied[word] & (u64::MAX << bit);
        if here != 0 {
            self.cur += u64::from(here.trailing_zeros()) - bit as u64;
        } else if !self.turn_far::<false>(u64::MAX) {
            self.cur_pos = 0;
            return None;
        }
        let e = self.buckets[(self.cur % FINE as u64) as usize].0[0];
        self.cur_pos = 1;
        self.popped += 1;
        Some((e.time, e.event))
    }

    /// Turns the wheel past the current bitmap word (whose remaining buckets are empty) to the
    /// next occupied bucket, moving the window along as it goes, but no further than bucket
    /// `stop`; false when there is no event up to `stop`'s bucket (the wheel then serves `stop`,
    /// if it got there, so events scheduled from there on land in their own buckets rather than
    /// all in a later one being served).
    #[inline(never)]
    fn turn_far<const BOUNDED: bool>(&mut self, stop: u64) -> bool {
        // Unbounded, the tests against `stop` compile away.
        let stop = if BOUNDED { stop } else { u64::MAX };
        let mut from = self.cur + 1;
        loop {
            if from > stop {
                return false;
            }
            if let Some(b) = self.next_occupied(from) {
                self.advance(b.min(stop));
                return b <= stop;
            }
            // The window is empty from `from` on.
            if stop < self.window_end {
                self.advance(stop);
                return false;
            }
            if self.ring_len == 0 {
                if self.overflow_next == u64::MAX {
                    return false;
                }
                // Nothing before the heap's earliest coarse bucket: jump there, or to `stop`.
                let to = self.overflow_next.min(stop / SPAN);
                self.window_end = to * SPAN;
                self.ring_end = to + self.ring_mask as u64 + 1;
                self.refill();
            }
            from = self.window_end;
            self.advance(from.min(stop));
        }
    }

    /// The first occupied window bucket in `from..window_end`.
    fn next_occupied(&self, from: u64) -> Option<u64> {
        let mut base = from - from % 64;
        let mut bits =
            self.occupied[(base % FINE as u64) as usize / 64] & (u64::MAX << (from % 64));
        while bits == 0 {
            base += 64;
            if base >= self.window_end {
                return None;
            }
            bits = self.occupied[(base % FINE as u64) as usize / 64];
        }
        Some(base + u64::from(bits.trailing_zeros()))
    }

    /// Serves bucket `b` next, sliding the window so it starts at `b`'s coarse bucket.
    fn advance(&mut self, b: u64) {
        self.cur = b;
        while self.window_end < (b / SPAN + 2) * SPAN {
            self.shift();
        }
    }

    /// Slides the window by one coarse bucket: the ring's next coarse bucket moves into the
    /// window's buckets, in scheduling order, and the heap's events for the coarse bucket that
    /// enters the ring's horizon move into the ring. Both happen before any later-scheduled
    /// event can land in those buckets (they were beyond the window, or the ring, until now),
    /// so every event keeps its place among equal times.
    fn shift(&mut self) {
        let c = self.window_end / SPAN;
        self.window_end += SPAN;
        self.ring_end += 1;
        let slot = self.ring_slot(c);
        let bucket = std::mem::replace(&mut self.ring[slot], EMPTY_COARSE);
        self.ring_len -= bucket.len as usize;
        let (mut chunk, mut left) = (bucket.head, bucket.len as usize);
        while left > 0 {
            let n = left.min(CHUNK);
            for i in 0..n {
                let events = &self.chunks.events[chunk as usize];
                let e = Slot {
                    time: events.times[i],
                    event: events.events[i],
                };
                self.put(self.bucket_of(e.time), e);
            }
            self.chunks.free.push(chunk);
            chunk = self.chunks.next[chunk as usize];
            left -= n;
        }
        if self.overflow_next < self.ring_end {
            self.refill();
        }
    }

    /// Moves the heap events that came within the ring's horizon into the ring.
    #[inline(never)]
    fn refill(&mut self) {
        let end = self.ring_end;
        while self.overflow_next < end {
            let Some(Reverse(e)) = self.overflow.pop() else {
                break;
            };
            let slot = self.ring_slot(self.bucket_of(e.time) / SPAN);
            let e = Slot {
                time: e.time,
                event: e.event,
            };
            self.chunks.push(&mut self.ring[slot], e);
            self.ring_len += 1;
            self.overflow_next = self
                .overflow
                .peek()
                .map_or(u64::MAX, |Reverse(next)| self.bucket_of(next.time) / SPAN);
        }
    }

    /// The time of the next event, without popping it: the wheel turns to it (emptying the
    /// buckets it passes), so an event scheduled later for an earlier time is still popped
    /// first (it goes into the bucket being served, in time order).
    pub fn next_time(&mut self) -> Option<Time> {
        self.next_time_by::<false>(u64::MAX)
    }

    /// [`next_time`](Self::next_time), turning the wheel no further than bucket `stop`: `None`
    /// also when the next event is in a later bucket.
    fn next_time_by<const BOUNDED: bool>(&mut self, stop: u64) -> Option<Time> {
        let stop = if BOUNDED { stop } else { u64::MAX };
        loop {
            let i = (self.cur % FINE as u64) as usize;
            let len = usize::from(self.lens[i]);
            if self.cur_pos < len {
                return Some(self.buckets[i].0[self.cur_pos].time);
            }
            if len == SLOTS {
                if let Some(e) = self.spill[i].get(self.cur_pos - SLOTS) {
                    return Some(e.time);
                }
                self.spill[i].clear();
            }
            self.lens[i] = 0;
            let (word, bit) = (i / 64, i % 64);
            self.occupied[word] &= !(1 << bit);
            let here = self.occupied[word] & (u64::MAX << bit);
            self.cur_pos = 0;
            if here != 0 {
                let b = self.cur + u64::from(here.trailing_zeros()) - bit as u64;
                if b > stop {
                    self.cur = self.cur.max(stop);
                    return None;
                }
                self.cur = b;
            } else if !self.turn_far::<BOUNDED>(stop) {
                return None;
            }
        }
    }

    /// Probably the next event: a look-ahead without branches, so the simulation can prefetch
    /// what that event will touch. It reads the bucket being served or the next occupied one of
    /// the same bitmap word; when the next event is elsewhere, what it returns is some other
    /// (possibly stale) event, harmless for a hint.
    #[inline(always)]
    pub fn peek_near(&self) -> Event {
        let i = (self.cur % FINE as u64) as usize;
        let (word, bit) = (i / 64, i % 64);
        let later = self.occupied[word] & (u64::MAX << bit) & !(1 << bit);
        let more = self.cur_pos < usize::from(self.lens[i]);
        let (next, at) = hint::select_unpredictable(
            more,
            (i, self.cur_pos),
            (word * 64 + later.trailing_zeros() as usize, 0),
        );
        self.buckets[next % FINE].0[at % SLOTS].event
    }

    /// Asks for the buckets from the one being served up to `until`'s (at most the window's),
    /// and their counts, when at least an eighth of the window's buckets hold events. A
    /// partition's queue comes back for its turn after every other partition has run, by when
    /// its buckets are out of cache: without this, each bucket missed the first time the turn
    /// wrote to it. A sparse wheel's turn is short, and would not repay the prefetches.
    pub fn prefetch_window(&self, until: Time) {
        let n = (self.bucket_of(until).saturating_sub(self.cur) + 1).min(FINE as u64);
        let occupied: u32 = self.occupied.iter().map(|w| w.count_ones()).sum();
        if u64::from(occupied) * 8 < n {
            return;
        }
        for b in self.cur..self.cur + n {
            let i = (b % FINE as u64) as usize;
            crate::prefetch::prefetch(&self.buckets[i]);
            if i.is_multiple_of(64) || b == self.cur {
                crate::prefetch::prefetch(&self.lens[i]);
            }
        }
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        (self.scheduled - self.popped) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A boxed array of `N` copies of `x`, built on the heap.
fn boxed_array<T: Clone, const N: usize>(x: T) -> Box<[T; N]> {
    vec![x; N]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("the vector has N elements"))
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

    #[test]
    fn the_ring_reaches_the_horizon() {
        // 4 ps buckets: a coarse bucket is 4,096 ps, so 1 us needs 245 of them, rounded up.
        let mut q = EventQueue::with_horizon(Duration::from_ps(4), Duration::from_us(1));
        assert_eq!(q.ring_mask + 1, 256);
        q.schedule(Time::from_ps(900_000), Event::FlowArrival);
        assert!(q.overflow.is_empty());
        assert_eq!(EventQueue::new(Duration::from_ps(4)).ring_mask + 1, COARSE);
    }

    /// Replays `ops` (0: pop; 1: look at the next event's time; 3: pop every event before
    /// `delta` after the last popped time; otherwise schedule `delta` after the last popped
    /// time, which may be before the time looked at or the limit popped to) against a plain
    /// ordered reference: events must come out in (time, scheduling order).
    fn check_against_reference(
        width_ps: u64,
        horizon_ps: u64,
        ops: Vec<(u64, u64)>,
    ) -> Result<(), TestCaseError> {
        let mut q =
            EventQueue::with_horizon(Duration::from_ps(width_ps), Duration::from_ps(horizon_ps));
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
            } else if op == 1 {
                let want = reference.peek().map(|Reverse((t, _))| *t);
                prop_assert_eq!(q.next_time().map(Time::as_ps), want);
                // Popping before the next time takes nothing; up to just past it, that event.
                if let Some(t) = want {
                    prop_assert_eq!(q.pop_before(Time::from_ps(t)), None);
                    let Some((got, Event::Timer(FlowId(s)))) = q.pop_before(Time::from_ps(t + 1))
                    else {
                        return Err(TestCaseError::fail("nothing popped before the next time"));
                    };
                    let Some(Reverse((wt, ws))) = reference.pop() else {
                        unreachable!()
                    };
                    prop_assert_eq!((got.as_ps(), u64::from(s)), (wt, ws));
                    now = wt;
                }
            } else if op == 3 {
                // Whatever comes before a limit, as a partition's window is drained.
                let limit = now + delta;
                while let Some((t, e)) = q.pop_before(Time::from_ps(limit)) {
                    let Some(Reverse((wt, ws))) = reference.pop() else {
                        return Err(TestCaseError::fail("popped from an empty queue"));
                    };
                    prop_assert_eq!((t.as_ps(), e), (wt, Event::Timer(FlowId(ws as u32))));
                    now = wt;
                }
                if let Some(Reverse((wt, _))) = reference.peek() {
                    prop_assert!(*wt >= limit, "{} left before the limit {}", wt, limit);
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
        Ok(())
    }

    proptest! {
        /// Interleaved schedules (never in the past), looks at the next time and pops, across bucket edges, the
        /// window's slides, the ring's wrap-around (rings of 64 coarse buckets and more) and
        /// the overflow heap.
        #[test]
        fn matches_a_sorted_reference(
            width_ps in 1u64..5000,
            horizon_ps in prop_oneof![0u64..1, 0u64..2_000_000],
            ops in prop::collection::vec(
                (0u64..5, prop_oneof![4 => 0u64..2000, 2 => 0u64..200_000, 1 => 0u64..50_000_000]),
                1..400,
            ),
        ) {
            check_against_reference(width_ps, horizon_ps, ops)?;
        }

        /// Many events in few buckets, out of order and at equal times: full buckets spill, the
        /// spill is served in order and events land in the bucket being served.
        #[test]
        fn crowded_buckets_match_a_sorted_reference(
            width_ps in 1u64..64,
            ops in prop::collection::vec((0u64..5, 0u64..100), 1..400),
        ) {
            check_against_reference(width_ps, 0, ops)?;
        }
    }
}
