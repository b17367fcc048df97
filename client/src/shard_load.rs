//! Bulk loading a sharded filter: every member built here from its share of the items,
//! batch after batch, then shipped with LOADCHUNK ([`crate::load`] per member).

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::load::Built;
use crate::shard::{route, Descriptor};

impl Descriptor {
    /// Bulk-loads `items` into the (empty) members: [`Descriptor::start_load`], one
    /// [`ShardLoad::add`], [`ShardLoad::finish`].
    pub fn load<T: AsRef<[u8]> + Sync>(&self, conn: &mut Conn, items: &[T]) -> Result<()> {
        let mut loading = self.start_load(conn)?;
        loading.add(items)?;
        loading.finish(conn)
    }

    /// Starts a bulk load into the members, which must be empty: each member is built here
    /// from its share of the items ([`crate::load::Built`]), batch after batch, and replaces
    /// the empty member by LOADCHUNK at [`ShardLoad::finish`]. Nothing is sent before, so an
    /// item a member would refuse fails the load with nothing written.
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
        let members = (0..self.members.len())
            .map(|_| Built::new(&self.spec, self.member_capacity()))
            .collect::<Result<_>>()?;
        Ok(ShardLoad {
            descriptor: self,
            members,
            added: vec![0; self.members.len()],
        })
    }
}

/// A bulk load of a sharded filter under way ([`Descriptor::start_load`]).
pub struct ShardLoad<'d> {
    descriptor: &'d Descriptor,
    members: Vec<Built>,
    /// Items each member has been given so far.
    added: Vec<u64>,
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
                .add_more(share, self.added[m])
                .map_err(|e| Error::new(format!("{}: member {}: {e}", d.name, d.members[m])))?;
            self.added[m] += share.len() as u64;
        }
        Ok(())
    }

    /// Replaces every (empty) member by its filter built here.
    pub fn finish(self, conn: &mut Conn) -> Result<()> {
        let mut cmds = Vec::new();
        for (built, member) in self.members.iter().zip(&self.descriptor.members) {
            cmds.push(redis::cmd("DEL").arg(member).clone());
            cmds.extend(built.loadchunks(member));
        }
        conn.pipeline(&cmds).map(|_| ())
    }
}
