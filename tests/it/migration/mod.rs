//! Valkey 9's atomic slot migration (`CLUSTER MIGRATESLOTS`) of the module's keys, on a
//! cluster of three masters with a replica each: every type moves whole ([`moves`]),
//! writes sent meanwhile arrive or are refused whole ([`writes`]). The module declares
//! `handle-atomic-slot-migration` there; these tests skip, saying so, on any other server.

mod moves;
mod writes;

use crate::support::{info_field, valkey_major, wait_until, RawConnection, Reply, Server};
use std::process::Command;

/// Whether the server under test is Valkey 9 or later; prints why a test skips otherwise.
pub(crate) fn valkey9(test: &str) -> bool {
    if valkey_major(&mut Server::start().raw()) >= Some(9) {
        return true;
    }
    eprintln!("{test}: skipped: atomic slot migration needs Valkey 9 (REDBLOOM_SERVER)");
    false
}

/// `INFO modules` names the options the module declared: atomic slot migration on Valkey 9
/// alone (Redis 7.0 and 8.2, Valkey 8.1: `handle-io-errors` only). Runs on every server.
#[test]
fn the_module_declares_atomic_slot_migration_on_valkey_9_only() {
    let server = Server::start();
    let mut conn = server.raw();
    let options = if valkey_major(&mut conn) >= Some(9) {
        "handle-io-errors|handle-atomic-slot-migration"
    } else {
        "handle-io-errors"
    };
    let modules = conn.call(&["INFO", "modules"]).text();
    let line = modules
        .lines()
        .find(|line| line.starts_with("module:name=bf,"))
        .expect("the module in INFO modules");
    assert!(line.ends_with(&format!(",options=[{options}]")), "{line}");
}

/// A master and its replica.
pub(crate) struct Shard {
    pub master: Server,
    pub replica: Server,
}

/// Three masters with one replica each, every slot covered, every replica in sync.
pub(crate) struct Cluster {
    pub shards: Vec<Shard>,
}

impl Cluster {
    pub fn start() -> Cluster {
        let args = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "5000",
        ];
        let mut nodes: Vec<Server> = (0..6).map(|_| Server::start_with(&args)).collect();
        let mut create = Command::new(crate::support::cli_binary());
        create.arg("--cluster").arg("create");
        for node in &nodes {
            create.arg(format!("127.0.0.1:{}", node.port));
        }
        let output = create
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .output()
            .expect("run redis-cli --cluster create");
        assert!(
            output.status.success(),
            "cluster create failed: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        for node in &nodes {
            let mut conn = node.raw();
            wait_until("cluster_state:ok", || {
                conn.call(&["CLUSTER", "INFO"])
                    .text()
                    .contains("cluster_state:ok")
            });
        }
        // Pair each replica with its master once it is in sync.
        let replicas: Vec<Server> = nodes.split_off(3);
        let mut shards: Vec<Shard> = Vec::new();
        let mut masters: Vec<Option<Server>> = nodes.into_iter().map(Some).collect();
        for replica in replicas {
            let mut conn = replica.raw();
            wait_until("the replica in sync", || {
                conn.call(&["INFO", "replication"])
                    .text()
                    .contains("master_link_status:up")
            });
            let port: u16 = info_field(&mut conn, "replication", "master_port")
                .parse()
                .unwrap();
            let master = masters
                .iter_mut()
                .find(|m| m.as_ref().is_some_and(|m| m.port == port))
                .and_then(Option::take)
                .expect("the replica's master among ours");
            shards.push(Shard { master, replica });
        }
        Cluster { shards }
    }

    /// The shard whose master serves `key`.
    pub fn owner(&self, key: &str) -> usize {
        let mut conn = self.shards[0].master.raw();
        let slot = conn.call(&["CLUSTER", "KEYSLOT", key]).int();
        for range in conn.call(&["CLUSTER", "SLOTS"]).array() {
            let range = range.array();
            let port = range[2].array()[1].int();
            if (range[0].int()..=range[1].int()).contains(&slot) {
                return self
                    .shards
                    .iter()
                    .position(|s| i64::from(s.master.port) == port)
                    .expect("the owner among our masters");
            }
        }
        panic!("no owner for slot {slot}");
    }

    /// The shard serving `key` and the next one, the migration's target: their indexes.
    pub fn migration_pair(&self, key: &str) -> (usize, usize) {
        let from = self.owner(key);
        (from, (from + 1) % self.shards.len())
    }
}

/// A slot's move from one master to another.
pub(crate) struct Migration {
    pub slot: String,
    pub target_id: String,
}

impl Migration {
    pub fn of(key: &str, source: &Server, target: &Server) -> Migration {
        Migration {
            slot: source
                .raw()
                .call(&["CLUSTER", "KEYSLOT", key])
                .int()
                .to_string(),
            target_id: target.raw().call(&["CLUSTER", "MYID"]).text(),
        }
    }

    /// `CLUSTER MIGRATESLOTS SLOTSRANGE slot slot NODE target`, sent to the source.
    pub fn start(&self, source: &mut RawConnection) {
        let slot = self.slot.as_str();
        let command = [
            "CLUSTER",
            "MIGRATESLOTS",
            "SLOTSRANGE",
            slot,
            slot,
            "NODE",
            &self.target_id,
        ];
        assert_eq!(source.call(&command), Reply::ok());
    }
}

/// The state of the last migration the node knows (`CLUSTER GETSLOTMIGRATIONS`), e.g.
/// `snapshotting`, `waiting-to-pause`, `success`, `failed`, `canceled`.
pub(crate) fn migration_state(conn: &mut RawConnection) -> String {
    let jobs = conn.call(&["CLUSTER", "GETSLOTMIGRATIONS"]).array();
    let job = jobs.first().expect("a slot migration").array();
    let state = job
        .chunks(2)
        .find(|pair| pair[0] == Reply::Bulk(Some(b"state".to_vec())))
        .expect("a state field");
    state[1].text()
}

/// Waits until the node's last migration is in `state`.
pub(crate) fn wait_for_state(conn: &mut RawConnection, state: &str) {
    wait_until(&format!("slot migration {state}"), || {
        migration_state(conn) == state
    });
}

/// The module's INFO counts (sections `bf_filters` and `bf_health`), zeros included.
pub(crate) fn module_counts(conn: &mut RawConnection) -> Vec<(String, String)> {
    let text =
        conn.call(&["INFO", "bf_filters"]).text() + &conn.call(&["INFO", "bf_health"]).text();
    text.lines()
        .filter_map(|line| line.split_once(':'))
        // The health alert counts follow the keys too; the time of the last crossing does not.
        .filter(|(name, _)| *name != "bf_health_last_crossing")
        // An expandable filter's memory depends on how its partitions were allocated (grown
        // in steps by adds, to the byte by a load): the same bytes, not the same memory.
        .filter(|(name, _)| *name != "bf_xf_bytes")
        .map(|(name, value)| (name.to_string(), value.trim().to_string()))
        .collect()
}

/// Whether every module count is zero.
pub(crate) fn counts_are_zero(conn: &mut RawConnection) -> bool {
    module_counts(conn).iter().all(|(_, value)| value == "0")
}
