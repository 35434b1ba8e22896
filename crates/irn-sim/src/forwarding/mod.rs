//! Forwarding: where a switch sends a packet, apart from whether it has room for it
//! (`switch/`). Routing tables give each (switch, destination) its equal-cost candidates
//! (`topology::routing`); the [`Balancer`] picks among them. A [`Deflector`] sends a packet
//! its output has no room for out of another port instead (DIBS).

mod balancer;
mod deflection;

pub use balancer::{Balancer, LoadBalancing, MAX_DRILL_MEMORY};
pub use deflection::{Deflection, Deflector};
