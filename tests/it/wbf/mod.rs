//! WBF.*: commands and their replies.

mod commands;
