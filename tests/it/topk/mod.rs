//! TOPK.*: Top-K against files and replies RedisBloom made itself ([`fixtures`]), exact
//! replies and errors ([`commands`]), replicas and AOF replays that build the same value
//! ([`determinism`]), hostile payloads and the memory ceiling ([`hostile`]).

mod commands;
mod determinism;
mod fixtures;
mod hostile;
mod known_answers;
