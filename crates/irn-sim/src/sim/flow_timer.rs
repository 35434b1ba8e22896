//! Which of a flow's `Timer` events is live.
//!
//! A flow wants its handler run at its transport's next deadline. The event wheel cannot take
//! an event back, so when the deadline moves earlier a new event is scheduled and the one it
//! supersedes stays in the queue, to be popped and ignored. A paced flow moves its deadline
//! earlier at every packet (its next send time comes before its congestion control's 55 µs
//! rate-increase timer), and once the send-time event has run, the rate-increase deadline is
//! due again, at the very time of the superseded event still in the queue: scheduling it anew
//! left one dead event per paced packet (half of DCQCN's timer events on the 128-host
//! benchmark, most of them through the overflow heap since 55 µs is beyond the wheel's ring).
//! So the superseded event is remembered, and taken up again when the deadline comes back to
//! it.
//!
//! Taking it up runs the handler at the same instant as scheduling it anew would, but at the
//! older event's place among events of that same picosecond: the order a duplicate left in the
//! queue already gave before.

use irn_core::Time;

/// A flow's live timer event and the superseded one it may take up again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FlowTimer {
    /// The time of the live event, or [`Self::NONE`].
    at: Time,
    /// A superseded event still in the queue, as picoseconds after `at` (0: none). 32 bits, so
    /// the timer fits the flow's cache line: one further than 4.29 ms is forgotten, and is
    /// then ignored when it comes, as every superseded event was before.
    later: u32,
}

impl FlowTimer {
    /// No event: the time a deadline is compared with when the flow has none.
    pub(super) const NONE: Time = Time::MAX;

    pub(super) const IDLE: FlowTimer = FlowTimer {
        at: Self::NONE,
        later: 0,
    };

    /// A `Timer` event popped at `now`: `None` if it is not the live one; otherwise no event is
    /// live until the next [`sync`](Self::sync), and what is returned is the superseded event
    /// still in the queue (or [`Self::NONE`]), which that sync may take up.
    pub(super) fn fire(&mut self, now: Time) -> Option<Time> {
        if self.at != now {
            return None;
        }
        let pending = match self.later {
            0 => Self::NONE,
            d => Time::from_ps(now.as_ps() + u64::from(d)),
        };
        *self = Self::IDLE;
        Some(pending)
    }

    /// The flow's next deadline is `deadline` (not before now), with `pending` the event
    /// [`fire`](Self::fire) returned if this follows it (else [`Self::NONE`]): whether an
    /// event must be scheduled at `deadline`. A live event at or before it stays live (it runs
    /// the handler, which looks again).
    pub(super) fn sync(&mut self, deadline: Time, pending: Time) -> bool {
        if deadline == pending {
            self.at = deadline;
            return false;
        }
        if deadline >= self.at {
            return false;
        }
        let superseded = if self.at != Self::NONE {
            self.at
        } else {
            pending
        };
        self.later = match superseded {
            s if s == Self::NONE || s <= deadline => 0,
            s => u32::try_from(s.as_ps() - deadline.as_ps()).unwrap_or(0),
        };
        self.at = deadline;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Time = FlowTimer::NONE;

    fn t(us: u64) -> Time {
        Time::from_ps(us * 1_000_000)
    }

    /// One step of a flow's timer: a sync to a deadline, or a pop at an instant followed by
    /// the handler's sync.
    enum Step {
        Sync(Time),
        Pop(Time, Option<Time>),
    }

    /// A case's name and steps, each with whether an event is scheduled and whether a popped
    /// event is live.
    type Case<'a> = (&'a str, &'a [(Step, bool, bool)]);

    /// Steps and, for each, whether an event is scheduled (a sync; after a pop, its sync) and
    /// whether a popped event is live.
    #[test]
    fn events_taken_up_and_ignored() {
        use Step::*;
        let cases: &[Case<'_>] = &[
            (
                "a paced flow's rate-increase event is taken up after each send",
                &[
                    (Sync(t(55)), true, false),
                    (Sync(t(1)), true, false), // the next send supersedes 55 µs
                    (Pop(t(1), Some(t(55))), false, true), // 55 µs is due again: taken up
                    (Sync(t(2)), true, false),
                    (Pop(t(2), Some(t(55))), false, true),
                    (Pop(t(55), None), false, true), // the taken-up event is live
                ],
            ),
            (
                "a deadline moved later leaves the live event live",
                &[
                    (Sync(t(10)), true, false),
                    (Sync(t(20)), false, false),
                    (Pop(t(10), Some(t(20))), true, true), // runs, then schedules 20 µs
                    (Pop(t(20), None), false, true),
                ],
            ),
            (
                "after a pop, a later deadline than the superseded event forgets it",
                &[
                    (Sync(t(55)), true, false),
                    (Sync(t(1)), true, false),
                    (Pop(t(1), Some(t(60))), true, true),
                    (Pop(t(55), None), false, false), // superseded for good
                    (Pop(t(60), None), false, true),
                ],
            ),
            (
                "after a pop, an earlier deadline keeps the superseded event",
                &[
                    (Sync(t(55)), true, false),
                    (Sync(t(1)), true, false),
                    (Pop(t(1), Some(t(3))), true, true),
                    (Pop(t(3), Some(t(55))), false, true),
                    (Pop(t(55), None), false, true),
                ],
            ),
            (
                "two supersessions in a row remember only the last",
                &[
                    (Sync(t(55)), true, false),
                    (Sync(t(10)), true, false),
                    (Sync(t(1)), true, false),
                    (Pop(t(1), Some(t(55))), true, true), // 10 µs remembered, not 55
                    (Pop(t(10), None), false, false),     // superseded by the 55 µs sync
                    (Pop(t(55), None), false, true),
                ],
            ),
            (
                "a superseded event beyond 32 bits of picoseconds is forgotten",
                &[
                    (Sync(t(5_000)), true, false),
                    (Sync(t(1)), true, false),
                    (Pop(t(1), Some(t(5_000))), true, true),
                    (Pop(t(5_000), None), false, true),
                ],
            ),
            (
                "no deadline after a pop schedules nothing",
                &[
                    (Sync(t(1)), true, false),
                    (Pop(t(1), None), false, true),
                    (Pop(t(2), None), false, false),
                ],
            ),
        ];
        for (name, steps) in cases {
            let mut timer = FlowTimer::IDLE;
            for (i, (step, schedules, live)) in steps.iter().enumerate() {
                let (scheduled, was_live) = match *step {
                    Sync(d) => (timer.sync(d, NONE), false),
                    Pop(now, next) => match timer.fire(now) {
                        None => (false, false),
                        Some(pending) => (next.is_some_and(|d| timer.sync(d, pending)), true),
                    },
                };
                assert_eq!(
                    (scheduled, was_live),
                    (*schedules, *live),
                    "{name}: step {i}"
                );
            }
        }
    }
}
