//! The scalable Bloom filter: one link's sizing and bits, the chain of links, the
//! cache-local (blocked) layout, and the SCANDUMP codec.

pub mod blocked;
pub mod chain;
pub mod dump;
pub mod link;
