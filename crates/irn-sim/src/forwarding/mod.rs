//! Forwarding: where a switch sends a packet, apart from whether it has room for it
//! (`switch/`). Routing tables give each (switch, destination) its equal-cost candidates
//! (`topology::routing`); the [`Balancer`] picks among them.

mod balancer;

pub use balancer::{Balancer, LoadBalancing, MAX_DRILL_MEMORY};
