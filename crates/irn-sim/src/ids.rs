//! Typed indices: every entity lives in a `Vec` and is named by its position there.

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The position in the owning `Vec`.
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

index_type!(
    /// A host or a switch.
    NodeId
);
index_type!(
    /// One end of a link: every node's ports are numbered globally, each node's contiguously.
    PortId
);
index_type!(
    /// A flow: one message on its own queue pair, from one host to another.
    FlowId
);
index_type!(
    /// A host, numbered 0..hosts among hosts only (the order of `Topology::hosts`).
    HostIdx
);
