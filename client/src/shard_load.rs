//! Bulk loading a sharded filter: every member built here from its share of the items,
//! batch after batch, starting from the empty filter the member is (as `shard create`
//! reserved it, with the server's configs), then shipped all or nothing ([`crate::ship`]:
//! under temporary keys in the members' slots, renamed over the still-empty members at
//! the end).

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::load::{Built, Limits};
use crate::shard::{route, Descriptor};
use crate::ship::{self, Replace, Ship, Target};

impl Descriptor {
    /// Bulk-loads `items` into the (empty) members: [`Descriptor::start_load`], one
    /// [`ShardLoad::add`], [`ShardLoad::finish`] (never stopped).
    pub fn load<T: AsRef<[u8]> + Sync>(&self, conn: &mut Conn, items: &[T]) -> Result<()> {
        let mut loading = self.start_load(conn)?;
        loading.add(items)?;
        loading.finish(conn, &mut Ship::new(&|| false, &mut |_| {}))?;
        Ok(())
    }

    /// Starts a bulk load into the members, which must be empty: each member is built here
    /// from its share of the items, from the member's own shape (its SCANDUMP header; a
    /// Cuckoo filter's CF.INFO), batch after batch, and replaces the empty member at
    /// [`ShardLoad::finish`]. Nothing is sent before, so an item a member would refuse
    /// fails the load with nothing written.
    pub fn start_load(&self, conn: &mut Conn) -> Result<ShardLoad<'_>> {
        let held: i64 = self
            .member_infos(conn)?
            .iter()
            .filter_map(|m| m.int("Number of items inserted"))
            .sum();
        if held != 0 {
            return Err(Error::new(format!(
                "{}: shard load needs empty members; they hold {held} items",
                self.name
            )));
        }
        let limits = ship::server_limits(conn);
        let members = self
            .members
            .iter()
            .map(|m| ship::shape_of(conn, self.spec.family, m, &limits))
            .collect::<Result<_>>()?;
        Ok(ShardLoad {
            descriptor: self,
            members,
            added: vec![0; self.members.len()],
            limits,
        })
    }
}

/// A bulk load of a sharded filter under way ([`Descriptor::start_load`]).
pub struct ShardLoad<'d> {
    descriptor: &'d Descriptor,
    members: Vec<Built>,
    /// Items each member has been given so far.
    added: Vec<u64>,
    limits: Limits,
}

impl ShardLoad<'_> {
    /// Adds the next `items` of the input, each to its member's filter, in order.
    pub fn add<T: AsRef<[u8]> + Sync>(&mut self, items: &[T]) -> Result<()> {
        let d = self.descriptor;
        let mut shares: Vec<Vec<&[u8]>> = vec![Vec::new(); self.members.len()];
        for item in items {
            shares[route(item.as_ref(), d.shards()) as usize].push(item.as_ref());
        }
        for (m, share) in shares.iter().enumerate() {
            self.members[m]
                .add_within(share, self.added[m], &self.limits)
                .map_err(|e| {
                    Error::from(e).context(format!("{}: member {}", d.name, d.members[m]))
                })?;
            self.added[m] += share.len() as u64;
        }
        Ok(())
    }

    /// Bytes the members' LOADCHUNKs carry.
    pub fn dump_bytes(&self) -> u64 {
        self.members.iter().map(Built::dump_bytes).sum()
    }

    /// Replaces every (still empty) member by its filter built here, all or nothing up to
    /// the renames ([`ship::deliver`]); returns the bytes sent.
    pub fn finish(self, conn: &mut Conn, ship: &mut Ship<'_>) -> Result<u64> {
        let family = self.descriptor.spec.family;
        let targets: Vec<Target<'_>> = self
            .members
            .iter()
            .zip(&self.descriptor.members)
            .map(|(built, key)| Target {
                key,
                built,
                replace: Replace::EmptyFilter(family),
            })
            .collect();
        ship::deliver(conn, &targets, ship).map_err(|e| e.context(&self.descriptor.name))
    }
}
