//! Byte encoding of packets (being written).
