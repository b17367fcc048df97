//! A TCP proxy in front of a real server that forwards what the client sends at a limited
//! rate, so a test can act while a load's ship is under way (a loopback ship of tens of
//! megabytes is otherwise over in milliseconds). Replies pass unthrottled.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub struct Proxy {
    pub port: u16,
    stop: Arc<AtomicBool>,
}

fn pump(mut from: TcpStream, mut to: TcpStream, bytes_per_sec: Option<u64>) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
        if let Some(rate) = bytes_per_sec {
            std::thread::sleep(Duration::from_micros(n as u64 * 1_000_000 / rate));
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

impl Proxy {
    /// Listens on a free loopback port and forwards every connection to `target_port`,
    /// the client's bytes at `bytes_per_sec`.
    pub fn start(target_port: u16, bytes_per_sec: u64) -> Proxy {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind the proxy");
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                client.set_nonblocking(false).unwrap();
                let Ok(server) = TcpStream::connect(("127.0.0.1", target_port)) else {
                    continue;
                };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || pump(client, server, Some(bytes_per_sec)));
                std::thread::spawn(move || pump(s2, c2, None));
            }
        });
        Proxy { port, stop }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}
