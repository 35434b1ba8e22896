//! Packet FIFOs threaded through a shared pool of nodes.
//!
//! A switch has a queue per (input, output) pair — 256 of them at 16 ports — and a network has
//! a link FIFO per port; most are empty or short at any moment. A `VecDeque` each scatters their
//! buffers over the heap, so on a large topology nearly every enqueue touches a cold cache line.
//! Here every queue is a (head, tail) pair of indices into one pool of nodes (per switch, and one
//! for all links), and freed nodes are reused last-in first-out, so the packets in flight sit in
//! a few hot cache lines and nothing is allocated once a pool has grown to its peak.

/// No node: the end of a list.
const NIL: u32 = u32::MAX;

/// A FIFO of items in a [`Pool`]; empty by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fifo {
    head: u32,
    tail: u32,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo {
            head: NIL,
            tail: NIL,
        }
    }
}

impl Fifo {
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

#[derive(Clone, Copy, Debug)]
struct Node<T> {
    item: T,
    next: u32,
}

/// The nodes of all of one switch's FIFOs.
#[derive(Debug)]
pub struct Pool<T> {
    nodes: Vec<Node<T>>,
    /// Head of the list of free nodes.
    free: u32,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            nodes: Vec::new(),
            free: NIL,
        }
    }
}

impl<T: Copy> Pool<T> {
    /// Appends `item` to `q`.
    #[inline]
    pub fn push(&mut self, q: &mut Fifo, item: T) {
        let node = Node { item, next: NIL };
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        if q.tail == NIL {
            q.head = i;
        } else {
            self.nodes[q.tail as usize].next = i;
        }
        q.tail = i;
    }

    /// The front of `q`.
    #[inline]
    pub fn front(&self, q: &Fifo) -> Option<&T> {
        (q.head != NIL).then(|| &self.nodes[q.head as usize].item)
    }

    /// Removes and returns the front of `q`.
    #[inline]
    pub fn pop(&mut self, q: &mut Fifo) -> Option<T> {
        if q.head == NIL {
            return None;
        }
        let i = q.head;
        let node = self.nodes[i as usize];
        q.head = node.next;
        if q.head == NIL {
            q.tail = NIL;
        }
        self.nodes[i as usize].next = self.free;
        self.free = i;
        Some(node.item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    proptest! {
        /// Many FIFOs in one pool behave like as many `VecDeque`s.
        #[test]
        fn matches_vecdeques(ops in prop::collection::vec((0usize..4, any::<bool>(), any::<u16>()), 0..300)) {
            let mut pool = Pool::default();
            let mut fifos = [Fifo::default(); 4];
            let mut reference: [VecDeque<u16>; 4] = Default::default();
            let mut peak = 0;
            for (q, push, item) in ops {
                if push {
                    pool.push(&mut fifos[q], item);
                    reference[q].push_back(item);
                } else {
                    prop_assert_eq!(pool.pop(&mut fifos[q]), reference[q].pop_front());
                }
                prop_assert_eq!(fifos[q].is_empty(), reference[q].is_empty());
                prop_assert_eq!(pool.front(&fifos[q]), reference[q].front());
                peak = peak.max(reference.iter().map(VecDeque::len).sum::<usize>());
            }
            // Freed nodes are reused: the pool grows only to the most items held at once.
            prop_assert_eq!(pool.nodes.len(), peak);
        }
    }

    #[test]
    fn freed_nodes_are_reused() {
        let mut pool = Pool::default();
        let mut q = Fifo::default();
        for round in 0..10u32 {
            pool.push(&mut q, round);
            pool.push(&mut q, round + 100);
            assert_eq!(pool.pop(&mut q), Some(round));
            assert_eq!(pool.pop(&mut q), Some(round + 100));
            assert_eq!(pool.pop(&mut q), None);
        }
        assert_eq!(pool.nodes.len(), 2);
    }
}
