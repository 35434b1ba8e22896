//! Forwarding: where a switch sends a packet, apart from whether it has room for it
//! (`switch/`). Routing tables give each (switch, destination) its equal-cost candidates
//! (`topology::routing`); the [`Balancer`] picks among them. A [`Deflector`] sends a packet
//! its output has no room for out of another port instead (DIBS). [`conweave`] holds ConWeave's
//! ToR logic (source-ToR rerouting, destination-ToR reordering) as state machines.

mod balancer;
pub mod conweave;
mod deflection;

pub use balancer::{Balancer, ControlBalancing, DrillTies, LoadBalancing, MAX_DRILL_MEMORY};
pub use deflection::{Deflection, Deflector};
