//! RESP on the wire: one command encoder, the parsed reply, and a raw connection that
//! returns every reply byte for byte (RESP2, or RESP3 after HELLO 3).

use super::server::slowdown;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Appends one command, as a RESP array of bulk strings, to `out`.
pub fn encode_into<A: AsRef<[u8]>>(out: &mut Vec<u8>, args: &[A]) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for arg in args {
        let arg = arg.as_ref();
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// One command as a RESP array of bulk strings.
pub fn encode<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(&mut out, args);
    out
}

/// A RESP2 reply as parsed from the wire.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Simple("OK".into())
    }
    /// An error reply with exactly this text (after the `-`).
    pub fn err(text: &str) -> Reply {
        Reply::Error(text.into())
    }
    /// A (non-nil) bulk string.
    pub fn bulk(data: impl AsRef<[u8]>) -> Reply {
        Reply::Bulk(Some(data.as_ref().to_vec()))
    }
    /// A nil bulk string.
    pub fn nil() -> Reply {
        Reply::Bulk(None)
    }
    /// An array of integers.
    pub fn int_array(values: &[i64]) -> Reply {
        Reply::Array(Some(values.iter().map(|&n| Reply::Int(n)).collect()))
    }
    /// An array of bulk strings (BF.DEBUG's shape).
    pub fn bulk_array(values: &[&str]) -> Reply {
        Reply::Array(Some(values.iter().map(Reply::bulk).collect()))
    }
    pub fn int(&self) -> i64 {
        match self {
            Reply::Int(n) => *n,
            other => panic!("expected an integer, got {other:?}"),
        }
    }
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Reply::Bulk(Some(b)) => b.clone(),
            Reply::Simple(s) => s.as_bytes().to_vec(),
            other => panic!("expected a string, got {other:?}"),
        }
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes()).to_string()
    }
    pub fn array(&self) -> Vec<Reply> {
        match self {
            Reply::Array(Some(items)) => items.clone(),
            other => panic!("expected an array, got {other:?}"),
        }
    }
    pub fn ints(&self) -> Vec<i64> {
        self.array().iter().map(Reply::int).collect()
    }
    pub fn error(&self) -> String {
        match self {
            Reply::Error(e) => e.clone(),
            other => panic!("expected an error, got {other:?}"),
        }
    }
    /// The reply in the fixture manifests' JSON form.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Reply::Simple(s) => Value::String(s.clone()),
            Reply::Error(e) => serde_json::json!({ "error": e }),
            Reply::Int(n) => Value::from(*n),
            Reply::Bulk(None) | Reply::Array(None) => Value::Null,
            Reply::Bulk(Some(b)) => Value::String(String::from_utf8_lossy(b).to_string()),
            Reply::Array(Some(items)) => Value::Array(items.iter().map(Reply::to_json).collect()),
        }
    }
}

/// A plain RESP2 connection: the exact bytes of each reply, and its parsed form.
pub struct RawConnection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// Bytes of the last reply, exactly as received.
    pub last_raw: Vec<u8>,
}

impl RawConnection {
    pub fn connect(port: u16) -> std::io::Result<RawConnection> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(120) * slowdown()))?;
        stream.set_nodelay(true)?;
        Ok(RawConnection {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
            last_raw: Vec::new(),
        })
    }

    /// Every key of the database (`KEYS *`), sorted.
    pub fn sorted_keys(&mut self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .call(&["KEYS", "*"])
            .array()
            .iter()
            .map(Reply::text)
            .collect();
        keys.sort();
        keys
    }

    /// A connection switched to RESP3 with `HELLO 3` (its reply, a map, is read and dropped).
    pub fn connect_resp3(port: u16) -> std::io::Result<RawConnection> {
        let mut conn = RawConnection::connect(port)?;
        conn.call(&["HELLO", "3"]);
        assert!(
            conn.last_raw.starts_with(b"%"),
            "HELLO 3 did not answer with a map: {:?}",
            String::from_utf8_lossy(&conn.last_raw)
        );
        Ok(conn)
    }

    /// Sends a command; returns its reply's bytes exactly as received.
    pub fn call_raw<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Vec<u8> {
        self.call(args);
        self.last_raw.clone()
    }

    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) -> std::io::Result<()> {
        self.writer.write_all(&encode(args))
    }

    /// Sends a command and reads its reply.
    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Reply {
        self.send(args).expect("send");
        self.read_reply()
    }

    /// Sends many commands at once (pipelining) and reads all replies.
    pub fn pipeline<A: AsRef<[u8]>>(&mut self, commands: &[Vec<A>]) -> Vec<Reply> {
        let mut out = Vec::new();
        for cmd in commands {
            encode_into(&mut out, cmd);
        }
        self.writer.write_all(&out).expect("send");
        commands.iter().map(|_| self.read_reply()).collect()
    }

    pub fn read_reply(&mut self) -> Reply {
        self.last_raw.clear();
        self.parse()
    }

    fn line(&mut self) -> String {
        let mut line = Vec::new();
        self.reader.read_until(b'\n', &mut line).expect("read");
        assert!(
            line.ends_with(b"\r\n"),
            "connection closed or bad line {line:?}"
        );
        self.last_raw.extend_from_slice(&line);
        String::from_utf8_lossy(&line[..line.len() - 2]).to_string()
    }

    fn parse(&mut self) -> Reply {
        let line = self.line();
        let (kind, rest) = line.split_at(1);
        match kind {
            "+" => Reply::Simple(rest.to_string()),
            "-" => Reply::Error(rest.to_string()),
            ":" => Reply::Int(rest.parse().expect("integer")),
            // A verbatim string (RESP3: INFO's reply) is the bulk of its text, its
            // `txt:` format prefix left out.
            "$" | "=" => {
                let len: i64 = rest.parse().expect("length");
                if len < 0 {
                    return Reply::Bulk(None);
                }
                let mut data = vec![0; len as usize + 2];
                self.reader.read_exact(&mut data).expect("bulk");
                self.last_raw.extend_from_slice(&data);
                data.truncate(len as usize);
                if kind == "=" {
                    data.drain(..4.min(data.len()));
                }
                Reply::Bulk(Some(data))
            }
            "*" => {
                let len: i64 = rest.parse().expect("length");
                if len < 0 {
                    return Reply::Array(None);
                }
                Reply::Array(Some((0..len).map(|_| self.parse()).collect()))
            }
            // RESP3 types (after HELLO 3) folded into the RESP2 shapes; `last_raw` tells
            // them apart: a map is its flat key/value array, null a nil bulk, a boolean 1/0,
            // a double the bulk string of its digits.
            "%" => {
                let len: i64 = rest.parse().expect("length");
                Reply::Array(Some((0..2 * len).map(|_| self.parse()).collect()))
            }
            "_" => Reply::Bulk(None),
            "#" => Reply::Int(i64::from(rest == "t")),
            "," => Reply::Bulk(Some(rest.as_bytes().to_vec())),
            _ => panic!("unexpected reply line {line:?}"),
        }
    }
}

/// Runs `line` (space-separated) and checks its reply.
#[track_caller]
pub fn expect(conn: &mut RawConnection, line: &str, want: Reply) {
    assert_eq!(call(conn, line), want, "{line}");
}

/// Shorthand: one command, its reply.
pub fn call(conn: &mut RawConnection, line: &str) -> Reply {
    let args: Vec<&str> = line.split(' ').collect();
    conn.call(&args)
}

/// Sends many commands in one pipeline and checks every reply equals `expected`.
pub fn pipeline_expect(conn: &mut RawConnection, commands: &[Vec<String>], expected: &Reply) {
    for (cmd, reply) in commands.iter().zip(conn.pipeline(commands)) {
        assert_eq!(&reply, expected, "{cmd:?}");
    }
}
