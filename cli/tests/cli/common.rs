//! Running the CLI, and a cluster of three masters with one replica each.

use crate::support::{cli_binary, wait_until, Server};
use std::path::Path;
use std::process::Command;

/// What one run of `redbloom` printed and how it ended.
pub struct Run {
    pub ok: bool,
    /// The exit code (`None`: ended by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn redbloom(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_redbloom"))
        .args(args)
        .output()
        .expect("run redbloom");
    Run {
        ok: output.status.success(),
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).to_string(),
        stderr: String::from_utf8_lossy(&output.stderr).to_string(),
    }
}

/// Runs `redbloom`, failing the test unless it succeeds; returns standard output.
pub fn ok(args: &[&str]) -> String {
    let run = redbloom(args);
    assert!(run.ok, "redbloom {args:?} failed: {}", run.stderr);
    run.stdout
}

/// Runs `redbloom`, expecting a failure with exactly one line on standard error (and
/// nothing on standard output); returns that line.
pub fn fails(args: &[&str]) -> String {
    let run = redbloom(args);
    assert!(!run.ok, "redbloom {args:?} succeeded: {}", run.stdout);
    assert_eq!(run.stdout, "", "{args:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
    run.stderr.trim_end().to_string()
}

/// Waits for `child` to end, reading its peak resident memory (VmHWM, in bytes) from /proc
/// until then (the mark only grows); returns its exit status and that peak.
pub fn wait_peak_rss(child: &mut std::process::Child) -> (std::process::ExitStatus, u64) {
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    loop {
        if let Ok(status) = std::fs::read_to_string(&status_file) {
            if let Some(kb) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            {
                peak_kb = peak_kb.max(kb);
            }
        }
        if let Some(status) = child.try_wait().expect("wait") {
            return (status, peak_kb * 1024);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

pub fn url(server: &Server) -> String {
    format!("redis://127.0.0.1:{}/", server.port)
}

/// Writes one item per line.
pub fn write_items(path: &Path, items: impl Iterator<Item = String>) {
    let mut text = String::new();
    for item in items {
        text.push_str(&item);
        text.push('\n');
    }
    std::fs::write(path, text).expect("write items");
}

pub struct Cluster {
    pub nodes: Vec<Server>,
}

impl Cluster {
    /// Six nodes: three masters, each with one replica; a short node timeout so a failover
    /// takes a few seconds.
    pub fn start() -> Cluster {
        Cluster::start_with(1)
    }

    /// Three masters with `replicas` replicas each.
    pub fn start_with(replicas: usize) -> Cluster {
        let args = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "1500",
        ];
        let nodes: Vec<Server> = (0..3 * (1 + replicas))
            .map(|_| Server::start_with(&args))
            .collect();
        let mut create = Command::new(cli_binary());
        create.arg("--cluster").arg("create");
        for node in &nodes {
            create.arg(format!("127.0.0.1:{}", node.port));
        }
        let output = create
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .output()
            .expect("run --cluster create");
        assert!(
            output.status.success(),
            "cluster create failed: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        let cluster = Cluster { nodes };
        cluster.wait_stable(&[]);
        cluster
    }

    /// `CLUSTER NODES` lines as (id, port, flags, master id, slots) of a live node.
    pub fn topology(&self, skip: &[u16]) -> Vec<(String, u16, String, String, String)> {
        let node = self.nodes.iter().find(|n| !skip.contains(&n.port)).unwrap();
        let text = node.raw().call(&["CLUSTER", "NODES"]).text();
        text.lines()
            .map(|line| {
                let f: Vec<&str> = line.split(' ').collect();
                let port = f[1].split(['@', ':']).nth(1).unwrap().parse().unwrap();
                (
                    f[0].to_string(),
                    port,
                    f[2].to_string(),
                    f[3].to_string(),
                    f[8..].join(" "),
                )
            })
            .collect()
    }

    /// Ports of the masters that serve slots (not failed).
    pub fn masters(&self, skip: &[u16]) -> Vec<u16> {
        self.topology(skip)
            .into_iter()
            .filter(|t| t.2.contains("master") && !t.2.contains("fail") && !t.4.is_empty())
            .map(|t| t.1)
            .collect()
    }

    pub fn node(&self, port: u16) -> &Server {
        self.nodes.iter().find(|n| n.port == port).unwrap()
    }

    /// Waits until every live node says `cluster_state:ok`, three masters serve slots, and
    /// each has a replica in sync.
    pub fn wait_stable(&self, skip: &[u16]) {
        for node in self.nodes.iter().filter(|n| !skip.contains(&n.port)) {
            wait_until("cluster_state:ok", || {
                node.raw()
                    .call(&["CLUSTER", "INFO"])
                    .text()
                    .contains("cluster_state:ok")
            });
        }
        wait_until("three masters", || self.masters(skip).len() == 3);
    }

    /// The master port serving `slot`.
    pub fn owner(&self, slot: u16, skip: &[u16]) -> u16 {
        let node = self.nodes.iter().find(|n| !skip.contains(&n.port)).unwrap();
        for range in node.raw().call(&["CLUSTER", "SLOTS"]).array() {
            let range = range.array();
            if (range[0].int()..=range[1].int()).contains(&i64::from(slot)) {
                return range[2].array()[1].int() as u16;
            }
        }
        panic!("no owner for slot {slot}");
    }
}
