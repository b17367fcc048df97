//! The client's error: what kind of failure it was ([`Error`]'s variants, for a program to
//! match on) and a one-line message meant for a person (the CLI prints it as is). Every
//! message is one line whatever a server or the OS put in the text, and never holds a
//! password: URLs in it are redacted ([`redact`]).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Bad arguments: an option out of range, options that exclude each other (the CLI
    /// exits 2, as for the usage errors its parser finds).
    Usage(String),
    /// A server could not be reached or did not speak Redis: connection refused, no answer
    /// within the timeout, a port that is not Redis.
    Connection(String),
    /// A file could not be read or written, or is not a valid snapshot (damaged, truncated,
    /// of an unknown family or version).
    File(String),
    /// Stopped by a signal (SIGINT, SIGTERM) before anything was changed.
    Interrupted(String),
    /// Anything else: a server's error reply, a refusal (a key that exists, a member that
    /// holds items), an item a filter refuses.
    Failed(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// One line of text, any URL's password replaced by `***`.
fn one_line(text: &str) -> String {
    redact(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// `text` with the password of every `redis://` / `rediss://` / `valkey://` URL in it
/// replaced by `***` (`redis://user:***@host:port`, `redis://:***@host`).
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        // The authority ends at the first '/', whitespace or end of text; its userinfo at the
        // last '@' in it.
        let end = after
            .find(|c: char| c == '/' || c.is_whitespace())
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@') {
            Some(at_sign) => {
                let userinfo = &authority[..at_sign];
                match userinfo.find(':') {
                    Some(colon) => {
                        out.push_str(&userinfo[..colon]);
                        out.push_str(":***");
                    }
                    // `redis://password@host` is read as a password by redis-rs too.
                    None if !userinfo.is_empty() => out.push_str("***"),
                    None => {}
                }
                out.push_str(&authority[at_sign..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

impl Error {
    /// A failure ([`Error::Failed`]).
    pub fn new(message: impl AsRef<str>) -> Error {
        Error::Failed(one_line(message.as_ref()))
    }

    pub fn usage(message: impl AsRef<str>) -> Error {
        Error::Usage(one_line(message.as_ref()))
    }

    pub fn connection(message: impl AsRef<str>) -> Error {
        Error::Connection(one_line(message.as_ref()))
    }

    pub fn file(message: impl AsRef<str>) -> Error {
        Error::File(one_line(message.as_ref()))
    }

    pub fn interrupted(message: impl AsRef<str>) -> Error {
        Error::Interrupted(one_line(message.as_ref()))
    }

    /// The message, one line.
    pub fn message(&self) -> &str {
        match self {
            Error::Usage(m)
            | Error::Connection(m)
            | Error::File(m)
            | Error::Interrupted(m)
            | Error::Failed(m) => m,
        }
    }

    /// The same kind of error with `prefix: ` before its message.
    pub fn context(self, prefix: impl fmt::Display) -> Error {
        let text = |m: String| format!("{prefix}: {m}");
        match self {
            Error::Usage(m) => Error::Usage(text(m)),
            Error::Connection(m) => Error::Connection(text(m)),
            Error::File(m) => Error::File(text(m)),
            Error::Interrupted(m) => Error::Interrupted(text(m)),
            Error::Failed(m) => Error::Failed(text(m)),
        }
    }

    /// The kind's name, as the CLI's `--json` errors give it.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Usage(_) => "usage",
            Error::Connection(_) => "connection",
            Error::File(_) => "file",
            Error::Interrupted(_) => "interrupted",
            Error::Failed(_) => "failed",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Error {
        let text = e.to_string();
        if e.is_io_error()
            || e.is_timeout()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
        {
            Error::connection(text)
        } else {
            Error::new(text)
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::new(e.to_string())
    }
}

impl From<redis::ParsingError> for Error {
    fn from(e: redis::ParsingError) -> Error {
        Error::new(e.to_string())
    }
}

impl From<redbloom_core::client_logic::LogicError> for Error {
    fn from(e: redbloom_core::client_logic::LogicError) -> Error {
        use redbloom_core::client_logic::LogicError;
        match e {
            LogicError::Usage(m) => Error::usage(m),
            LogicError::File(m) => Error::file(m),
            LogicError::Failed(m) => Error::new(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        let cases = [
            (
                "cannot connect to redis://:hunter2@127.0.0.1:6379/: refused",
                "cannot connect to redis://:***@127.0.0.1:6379/: refused",
            ),
            (
                "redis://alice:s3cr:et@h:1 and rediss://bob:pw@h2/0",
                "redis://alice:***@h:1 and rediss://bob:***@h2/0",
            ),
            ("redis://hunter2@h:1", "redis://***@h:1"),
            ("redis://h:1/ x", "redis://h:1/ x"),
            ("no url here", "no url here"),
            ("redis://user@pw@h", "redis://***@h"),
        ];
        for (text, expected) in cases {
            assert_eq!(redact(text), expected, "{text}");
        }
        let e = Error::new("cannot connect to redis://:hunter2@h:1:\nrefused");
        assert_eq!(e.to_string(), "cannot connect to redis://:***@h:1: refused");
        assert!(!format!("{e:?}").contains("hunter2"));
    }
}
