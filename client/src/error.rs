//! One error type: a one-line message meant for a person (the CLI prints it as is).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(message: impl Into<String>) -> Error {
        // One line, whatever a server or the OS put in the text.
        let text: String = message.into();
        Error(text.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Error {
        Error::new(e.to_string())
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
