//! Sets of a switch's local ports, sized for the largest switch ([`MAX_SWITCH_PORTS`]).
//!
//! The packet path asks "which inputs may resume?" once per packet that leaves a switch, and the
//! answer is nearly always "none", else one input: [`Resume`] says that in four bytes, and only
//! a shared buffer freeing room for several paused inputs at once leaves them in a [`PortSet`]
//! for the caller to take. So a 512-port switch costs a 64-port one nothing on that path.

use crate::topology::MAX_SWITCH_PORTS;

/// Words of a [`PortSet`].
const WORDS: usize = MAX_SWITCH_PORTS.div_ceil(64);

/// A set of local port numbers below [`MAX_SWITCH_PORTS`], a bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortSet([u64; WORDS]);

impl PortSet {
    #[inline(always)]
    pub fn insert(&mut self, port: usize) {
        self.0[port / 64] |= 1 << (port % 64);
    }

    #[inline(always)]
    pub fn remove(&mut self, port: usize) {
        self.0[port / 64] &= !(1 << (port % 64));
    }

    #[inline(always)]
    pub fn contains(&self, port: usize) -> bool {
        self.0[port / 64] >> (port % 64) & 1 == 1
    }

    /// Ports `64 * w` to `64 * w + 63`, a bit each.
    #[inline(always)]
    pub fn word(&self, w: usize) -> u64 {
        self.0[w]
    }

    /// The ports, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (self.0.iter().enumerate()).flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + b
                })
            })
        })
    }
}

/// The inputs whose upstream neighbours may resume after a packet left the switch: none, one,
/// or several (then held by the switch, [`Queues::take_resumed`](super::Queues::take_resumed)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resume(u32);

impl Resume {
    pub const NONE: Resume = Resume(0);
    /// Several inputs, held by the switch.
    pub const SEVERAL: Resume = Resume(u32::MAX);

    /// Input `input` if `resume`, else none: without a branch, as it runs per packet.
    #[inline(always)]
    pub fn input_if(resume: bool, input: usize) -> Resume {
        Resume(u32::from(resume) * (input as u32 + 1))
    }

    /// The one input to resume; `None` for none or several.
    #[inline(always)]
    pub fn one(self) -> Option<usize> {
        (self != Resume::NONE && self != Resume::SEVERAL).then(|| self.0 as usize - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_ports_of_every_word_in_order() {
        let mut s = PortSet::default();
        for p in [511, 0, 64, 63, 200] {
            s.insert(p);
        }
        s.remove(200);
        assert!(s.contains(511) && s.contains(0) && !s.contains(200) && !s.contains(1));
        assert_eq!(s.iter().collect::<Vec<_>>(), [0, 63, 64, 511]);
    }

    #[test]
    fn resume_names_one_input_or_none() {
        assert_eq!(Resume::input_if(true, 0).one(), Some(0));
        assert_eq!(Resume::input_if(true, 511).one(), Some(511));
        assert_eq!(Resume::input_if(false, 7), Resume::NONE);
        assert_eq!(Resume::NONE.one(), None);
        assert_eq!(Resume::SEVERAL.one(), None);
    }
}
