//! The queues between a queue pair and its driver.

use std::collections::VecDeque;

/// A first-in first-out queue that keeps its oldest item inline.
///
/// Drivers poll a queue pair's outputs after every input, so these queues hold one item at a
/// time nearly always: it stays in the queue pair's own memory, and only a backlog goes to the
/// heap.
#[derive(Debug, Clone)]
pub(crate) struct Fifo<T> {
    /// The oldest item; `None` only when `rest` is empty too.
    front: Option<T>,
    rest: VecDeque<T>,
}

impl<T> Fifo<T> {
    pub(crate) const fn new() -> Self {
        Fifo {
            front: None,
            rest: VecDeque::new(),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, item: T) {
        if self.front.is_none() {
            self.front = Some(item);
        } else {
            self.rest.push_back(item);
        }
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        let item = self.front.take()?;
        self.front = self.rest.pop_front();
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_in_first_out_across_the_spill() {
        let mut q = Fifo::new();
        assert_eq!(q.pop(), None::<u32>);
        q.push(1);
        q.push(2);
        q.push(3);
        assert_eq!(q.pop(), Some(1));
        q.push(4);
        assert_eq!(q.pop(), Some(2));
        assert_eq!(q.pop(), Some(3));
        assert_eq!(q.pop(), Some(4));
        assert_eq!(q.pop(), None);
        q.push(5);
        assert_eq!(q.pop(), Some(5));
        assert_eq!(q.pop(), None);
    }
}
