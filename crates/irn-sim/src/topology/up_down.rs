//! Up*/down* routing (Autonet, Schroeder et al., 1991): paths on any graph that cannot deadlock
//! a lossless (PFC) network.
//!
//! A breadth-first search from a root switch gives each switch a level; every switch-to-switch
//! link is oriented "up" towards the end nearer the root, or at equal levels towards the lower
//! node id. A legal path takes some up links, then only down links, never an up link after a
//! down one. The up links follow the strict order (level, id) and the down links its reverse,
//! so a chain of link-to-link dependencies that closed on itself would have to turn from down
//! back to up somewhere: the channel dependency graph of legal paths is acyclic, and PFC's
//! pauses cannot wait on each other in a cycle (Dally and Seitz's condition).
//!
//! The root is the switch of least eccentricity (the fewest hops to the farthest switch; ties
//! to the lower id), so both halves of a path stay short. The paths themselves are Yen's k
//! shortest legal loopless ones ([`super::k_shortest`]); a spur search here is a breadth-first
//! search over (switch, phase): phase "up" may still take up links, phase "down" has taken a
//! down link.

use std::collections::VecDeque;

use super::k_shortest::SpurSearch;

/// Marks a node a search has not reached.
const NONE: u32 = u32::MAX;

/// Each switch's place in the up*/down* order: a link from `a` to `b` goes up when `b`'s rank
/// is lower than `a`'s.
#[derive(Clone, Debug)]
pub(super) struct UpDown {
    /// Per node: its position in the order (level, id) from the root; `NONE` for a node that
    /// is not a switch or that the root cannot reach.
    rank: Vec<u32>,
}

impl UpDown {
    /// The order of the switch graph `adjacency` (each node's neighbouring switches,
    /// ascending; hosts have none) rooted at its most central switch among `switches`.
    pub(super) fn new(adjacency: &[Vec<u32>], switches: &[u32]) -> UpDown {
        let mut levels = vec![NONE; adjacency.len()];
        let root = (switches.iter().copied())
            .min_by_key(|&s| (eccentricity(adjacency, s, &mut levels), s))
            .unwrap_or(0);
        UpDown::rooted(adjacency, switches, root)
    }

    /// The order of `adjacency`'s switches by (hops from `root`, id).
    fn rooted(adjacency: &[Vec<u32>], switches: &[u32], root: u32) -> UpDown {
        let mut levels = vec![NONE; adjacency.len()];
        bfs_levels(adjacency, root, &mut levels);
        let mut order: Vec<u32> = (switches.iter().copied())
            .filter(|&s| levels[s as usize] != NONE)
            .collect();
        order.sort_unstable_by_key(|&s| (levels[s as usize], s));
        let mut rank = vec![NONE; adjacency.len()];
        for (r, &s) in order.iter().enumerate() {
            rank[s as usize] = r as u32;
        }
        UpDown { rank }
    }

    /// Whether the link from switch `a` to switch `b` goes up (towards the root).
    #[inline]
    pub(super) fn is_up(&self, a: u32, b: u32) -> bool {
        self.rank[b as usize] < self.rank[a as usize]
    }

    /// Whether the walk through `nodes` (consecutive ones linked) takes no up link after a
    /// down link.
    #[cfg(test)]
    pub(super) fn is_legal(&self, nodes: &[u32]) -> bool {
        let first_down = nodes.windows(2).position(|w| !self.is_up(w[0], w[1]));
        first_down.is_none_or(|d| nodes[d..].windows(2).all(|w| !self.is_up(w[0], w[1])))
    }
}

/// Hops from `from` to the switch farthest from it (`levels` is scratch space).
fn eccentricity(adjacency: &[Vec<u32>], from: u32, levels: &mut [u32]) -> u32 {
    bfs_levels(adjacency, from, levels);
    levels
        .iter()
        .copied()
        .filter(|&l| l != NONE)
        .max()
        .unwrap_or(0)
}

/// Fills `levels` with each node's hops from `from` over `adjacency` (`NONE` if unreached).
fn bfs_levels(adjacency: &[Vec<u32>], from: u32, levels: &mut [u32]) {
    levels.fill(NONE);
    levels[from as usize] = 0;
    let mut frontier = VecDeque::from([from]);
    while let Some(n) = frontier.pop_front() {
        for &m in &adjacency[n as usize] {
            if levels[m as usize] == NONE {
                levels[m as usize] = levels[n as usize] + 1;
                frontier.push_back(m);
            }
        }
    }
}

/// A legal path's phase at a switch: up links are still allowed (0), or a down link was taken
/// (1). A search state is `2 * node + phase`.
const UP: u32 = 0;
const DOWN: u32 = 1;

/// Yen's spur searches towards one destination over legal paths only.
pub(super) struct UpDownSearch<'a> {
    adjacency: &'a [Vec<u32>],
    order: &'a UpDown,
    to: u32,
    /// Legal hops from each state to `to` over the whole graph, `NONE` if none: a lower bound
    /// with nodes removed, which prunes searches that cannot arrive within their limit.
    hops_to: Vec<u32>,
    /// `blocked[n] == epoch`: node `n` (either phase) is removed in the current search.
    blocked: Vec<u32>,
    /// `parent[state]`: the state it was reached from, valid where `reached[state] == epoch`.
    parent: Vec<u32>,
    reached: Vec<u32>,
    epoch: u32,
    queue: Vec<(u32, u32)>,
}

impl<'a> UpDownSearch<'a> {
    pub(super) fn new(adjacency: &'a [Vec<u32>], order: &'a UpDown, to: u32) -> UpDownSearch<'a> {
        let states = 2 * adjacency.len();
        let mut search = UpDownSearch {
            adjacency,
            order,
            to,
            hops_to: vec![NONE; states],
            blocked: vec![0; adjacency.len()],
            parent: vec![0; states],
            reached: vec![0; states],
            epoch: 0,
            queue: Vec::new(),
        };
        search.count_hops_to();
        search
    }

    /// The state after the link `at -> m` from phase `phase`, if the link is legal there.
    #[inline]
    fn step(&self, at: u32, phase: u32, m: u32) -> Option<u32> {
        match (self.order.is_up(at, m), phase) {
            (true, UP) => Some(2 * m + UP),
            (true, _) => None,
            (false, _) => Some(2 * m + DOWN),
        }
    }

    /// Fills `hops_to` by a breadth-first search backwards from `to` in both phases: a state
    /// `(n, phase)` is one hop further than each legal step out of it.
    fn count_hops_to(&mut self) {
        let to = self.to;
        self.hops_to[(2 * to + UP) as usize] = 0;
        self.hops_to[(2 * to + DOWN) as usize] = 0;
        let mut frontier = VecDeque::from([2 * to + UP, 2 * to + DOWN]);
        while let Some(state) = frontier.pop_front() {
            let (m, d) = (state / 2, self.hops_to[state as usize]);
            for &n in &self.adjacency[m as usize] {
                for phase in [UP, DOWN] {
                    let before = (2 * n + phase) as usize;
                    if self.step(n, phase, m) == Some(state) && self.hops_to[before] == NONE {
                        self.hops_to[before] = d + 1;
                        frontier.push_back(before as u32);
                    }
                }
            }
        }
    }

    /// Breadth-first search from `start` (a state) to `to` in either phase, avoiding blocked
    /// nodes and the links from the start to `taken`, within `max_hops`: the states of the
    /// path, or `None`.
    fn breadth_first(&mut self, start: u32, taken: &[u32], max_hops: u32) -> Option<Vec<u32>> {
        let epoch = self.epoch;
        let spur = start / 2;
        self.queue.clear();
        self.queue.push((start, 0));
        self.reached[start as usize] = epoch;
        let mut next = 0;
        while let Some(&(state, hops)) = self.queue.get(next) {
            next += 1;
            let (at, phase) = (state / 2, state % 2);
            if at == self.to {
                return Some(self.path_to(start, state));
            }
            for &m in &self.adjacency[at as usize] {
                if self.blocked[m as usize] == epoch || at == spur && taken.contains(&m) {
                    continue;
                }
                let Some(s) = self.step(at, phase, m) else {
                    continue;
                };
                let left = self.hops_to[s as usize];
                if self.reached[s as usize] == epoch || left == NONE || hops + 1 + left > max_hops {
                    continue;
                }
                self.reached[s as usize] = epoch;
                self.parent[s as usize] = state;
                self.queue.push((s, hops + 1));
            }
        }
        None
    }

    /// The nodes from `start` to `end` along the search's parents.
    fn path_to(&self, start: u32, end: u32) -> Vec<u32> {
        let mut path = vec![end / 2];
        let mut at = end;
        while at != start {
            at = self.parent[at as usize];
            path.push(at / 2);
        }
        path.reverse();
        path
    }
}

impl SpurSearch for UpDownSearch<'_> {
    /// The shortest legal path from `spur` to the destination, continuing the legal walk
    /// `root` + `spur` (its phase carries on), that avoids the nodes of `root` and the links
    /// from `spur` to `taken`, within `max_hops`.
    ///
    /// A shortest one never visits a node twice (once in each phase): the down links taken
    /// after the second visit are legal from the first, which would make it shorter; so the
    /// nodes of `root` and `spur` are all a search needs to block.
    fn tail(&mut self, spur: u32, root: &[u32], taken: &[u32], max_hops: u32) -> Option<Vec<u32>> {
        let went_down = (root.windows(2).map(|w| (w[0], w[1])))
            .chain(root.last().map(|&r| (r, spur)))
            .any(|(a, b)| !self.order.is_up(a, b));
        let start = 2 * spur + if went_down { DOWN } else { UP };
        let least = self.hops_to[start as usize];
        if least == NONE || least > max_hops {
            return None;
        }
        self.epoch += 1;
        for &n in root {
            self.blocked[n as usize] = self.epoch;
        }
        self.blocked[spur as usize] = self.epoch;
        self.breadth_first(start, taken, max_hops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Switches 0-1-2-3-4-0 in a ring with the chord 1-3.
    fn ring_with_chord() -> Vec<Vec<u32>> {
        let links = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 3)];
        let mut adjacency = vec![Vec::new(); 5];
        for (a, b) in links {
            adjacency[a].push(b as u32);
            adjacency[b].push(a as u32);
        }
        for next in &mut adjacency {
            next.sort_unstable();
        }
        adjacency
    }

    #[test]
    fn the_root_is_the_most_central_switch_and_links_point_to_it() {
        let adjacency = ring_with_chord();
        let order = UpDown::new(&adjacency, &[0, 1, 2, 3, 4]);
        // Eccentricities: 0: 2, 1: 2, 2: 2, 3: 2, 4: 2; the tie goes to switch 0. Levels from
        // 0: 1 and 4 at 1, 2 and 3 at 2; order 0, 1, 4, 2, 3.
        assert_eq!(order.rank, vec![0, 1, 3, 4, 2]);
        assert!(order.is_up(1, 0) && order.is_up(4, 0));
        assert!(order.is_up(4, 1), "equal levels: up towards the lower id");
        assert!(order.is_up(3, 2) && order.is_up(3, 1) && order.is_up(2, 1));
        assert!(order.is_legal(&[3, 1, 0, 4]), "up, up, down");
        assert!(!order.is_legal(&[2, 3, 4]), "down 2->3, then up 3->4");
    }

    #[test]
    fn a_spur_search_keeps_the_phase_of_its_root() {
        let adjacency = ring_with_chord();
        let order = UpDown::new(&adjacency, &[0, 1, 2, 3, 4]);
        let mut search = UpDownSearch::new(&adjacency, &order, 4);
        // From 2 to 4: 2-3-4 is shorter but illegal; 2-1-0-4 goes up twice, then down.
        assert_eq!(search.tail(2, &[], &[], u32::MAX), Some(vec![2, 1, 0, 4]));
        assert_eq!(search.hops_to[2 * 2], 3);
        // Having come down 1->2, only down links remain: 2->3 and no way on from 3 to 4.
        assert_eq!(search.tail(2, &[1], &[], u32::MAX), None);
        // From 3 up to 1 (root 3), 1 may still go up to 0 and down to 4.
        assert_eq!(search.tail(1, &[3], &[], u32::MAX), Some(vec![1, 0, 4]));
        // 3-4 goes up (3 is the last in the order); without it and 3-1, up through 2.
        assert_eq!(search.tail(3, &[], &[], u32::MAX), Some(vec![3, 4]));
        let around = Some(vec![3, 2, 1, 0, 4]);
        assert_eq!(search.tail(3, &[], &[1, 4], u32::MAX), around);
        assert_eq!(search.tail(3, &[], &[1, 4], 3), None, "4 hops needed");
    }
}
