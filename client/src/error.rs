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

/// A URL (or what was given as one, parsed or not) as it may be echoed back: everything
/// before its last `@` after the scheme is the user information, of which only a user name
/// (the part before a `:`) is kept; the rest becomes `***`. `:s3cret@h:1` → `:***@h:1`,
/// `redis:/:s3cret@h` → `redis:/:***@h`, `redis://alice:pw@h` → `redis://alice:***@h`.
pub fn mask_url(url: &str) -> String {
    let Some(at) = url.rfind('@') else {
        return url.to_string();
    };
    // The scheme: letters, digits, `+-.` after a letter, then `:` and any slashes.
    let scheme_end = url
        .char_indices()
        .take_while(|&(i, c)| {
            c.is_ascii_alphabetic() || (i > 0 && (c.is_ascii_digit() || "+-.".contains(c)))
        })
        .last()
        .map_or(0, |(i, c)| i + c.len_utf8());
    let prefix_end = if scheme_end > 0 && url[scheme_end..].starts_with(':') {
        scheme_end + 1 + url[scheme_end + 1..].len()
            - url[scheme_end + 1..].trim_start_matches('/').len()
    } else {
        0
    };
    let prefix_end = prefix_end.min(at);
    let userinfo = &url[prefix_end..at];
    let masked = match userinfo.find(':') {
        Some(colon) => format!("{}:***", &userinfo[..colon]),
        None if userinfo.is_empty() => String::new(),
        None => "***".to_string(),
    };
    format!("{}{masked}{}", &url[..prefix_end], &url[at..])
}

/// A client library error in plain words: its text without the library's debug name of
/// the kind (`Password authentication failed - AuthenticationFailed` → `Password
/// authentication failed`), passwords of any URL in it masked.
pub fn plain(e: &redis::RedisError) -> String {
    let text = e.to_string();
    let kind = format!(" - {:?}", e.kind());
    redact(&text.replacen(&kind, "", 1))
}

/// The core's refusals in words (never their debug names), defined in
/// [`redbloom_core::client_logic::words`].
pub use redbloom_core::client_logic::words;

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

    /// The same kind of error with `; note` after its message.
    pub fn with_note(self, note: impl fmt::Display) -> Error {
        let text = |m: String| one_line(&format!("{m}; {note}"));
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
        let text = plain(&e);
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
        for (url, expected) in [
            (":s3cret@127.0.0.1:7803", ":***@127.0.0.1:7803"),
            (
                "redis:/:s3cret@127.0.0.1:7803",
                "redis:/:***@127.0.0.1:7803",
            ),
            ("redis://alice:pw@h:1/0", "redis://alice:***@h:1/0"),
            ("s3cret@h:1", "***@h:1"),
            ("redis://h:1", "redis://h:1"),
            ("rediss://:a@b@h", "rediss://:***@h"),
        ] {
            assert_eq!(mask_url(url), expected, "{url}");
        }
        let e = Error::new("cannot connect to redis://:hunter2@h:1:\nrefused");
        assert_eq!(e.to_string(), "cannot connect to redis://:***@h:1: refused");
        assert!(!format!("{e:?}").contains("hunter2"));
    }
}
