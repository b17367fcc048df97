//! The core's refusals in plain words, as every client shows them (never their Rust debug
//! names): the Rust client re-exports these as `redbloom_client::error::words`.

use crate::bloom::{AddOutcome, DumpError, LinkError};
use crate::counting::CountingAdd;
use crate::static_filter::BuildError;

pub fn link_error(e: &LinkError) -> &'static str {
    match e {
        LinkError::Invalid => "its capacity or error rate makes no filter",
        LinkError::TooLarge => "it would be larger than the filter size limit",
        LinkError::OutOfMemory => "out of memory",
    }
}

pub fn add_outcome(outcome: &AddOutcome) -> String {
    match outcome {
        AddOutcome::Added | AddOutcome::Exists => "added".to_string(),
        AddOutcome::Full => FULL.to_string(),
        AddOutcome::GrowFailed(e) => grow_failed(e),
    }
}

/// A counting Bloom filter's add, in the words of [`add_outcome`].
pub fn counting_add(outcome: &CountingAdd) -> String {
    match outcome {
        CountingAdd::Added => "added".to_string(),
        CountingAdd::Full => FULL.to_string(),
        CountingAdd::GrowFailed(e) => grow_failed(e),
    }
}

const FULL: &str = "the non-scaling filter is full";

fn grow_failed(e: &LinkError) -> String {
    format!("the filter cannot grow: {}", link_error(e))
}

pub fn dump_error(e: &DumpError) -> &'static str {
    match e {
        DumpError::BadData => "malformed or inconsistent data",
        DumpError::NoLink => "a chunk lies past the filter's end",
        DumpError::TooBig => "a chunk runs past the end of its part of the filter",
    }
}

pub fn build_error(e: &BuildError) -> &'static str {
    match e {
        BuildError::BadErrorRate => "the error rate is out of range",
        BuildError::TooManyItems => "too many distinct items",
        BuildError::TooLarge => "it would be larger than the filter size limit",
        BuildError::OutOfMemory => "out of memory",
        BuildError::Unpeelable => "no construction succeeded (duplicate item keys?)",
    }
}

/// An XF refusal in words: its reply text without the server's `ERR ` prefix.
pub fn xf_error(e: crate::expandable::XfError) -> String {
    let text = e.to_string();
    match text.strip_prefix("ERR ") {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}
