//! The scalable Bloom filter (BF.*): one link's sizing and bits ([`link`]), the chain of
//! links ([`chain`]), the cache-local (blocked) layout ([`blocked`]), the SCANDUMP codec
//! ([`dump`]) and the RDB layout ([`rdb`]).
//!
//! ```
//! use redbloom_core::bloom::{AddOutcome, Chain};
//!
//! // 1000 items at 1 % error, each new link twice as large, scaling, no memory ceiling.
//! let mut chain = Chain::new(1000, 0.01, 2, true, u64::MAX).unwrap();
//! let item = chain.hash(b"apple");
//! assert_eq!(chain.add(item, u64::MAX), AddOutcome::Added);
//! assert_eq!(chain.add(item, u64::MAX), AddOutcome::Exists);
//! assert!(chain.contains(item));
//! assert!(!chain.contains(chain.hash(b"pear")));
//! assert_eq!((chain.items(), chain.links().len(), chain.capacity()), (1, 1, 1000));
//! ```

pub mod blocked;
mod bulk;
pub mod chain;
pub mod dump;
mod health;
pub mod link;
mod merge;
pub mod rdb;
mod relocate;
pub mod shape;

pub use chain::{AddOutcome, Chain};
pub use dump::DumpError;
pub use link::{Link, LinkError, LinkShape};
