//! Redis Cluster's key-to-slot rule: CRC16 (XMODEM: polynomial 0x1021, initial value 0, no
//! reflection) of the key, or of its hash tag — the bytes between the first `{` and the
//! first `}` after it, when that span is not empty — modulo 16384.

/// Slots in a Redis or Valkey cluster.
pub const SLOTS: u16 = 16384;

/// CRC16-XMODEM, bit by bit (keys are short; speed does not matter here).
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The part of `key` that is hashed: its hash tag if it has a non-empty one, else all of it.
pub fn hashed_part(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// The cluster slot of `key` (`CLUSTER KEYSLOT`).
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hashed_part(key)) % SLOTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_check_value() {
        // The catalogued check value of CRC-16/XMODEM.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn slots_of_known_keys() {
        // As the Redis Cluster specification and `CLUSTER KEYSLOT` give them.
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"{foo}.bar"), 12182);
        assert_eq!(key_slot(b"{}foo"), key_slot(b"{}foo"));
        assert_eq!(hashed_part(b"{}foo"), b"{}foo");
        assert_eq!(hashed_part(b"a{b}{c}"), b"b");
        assert_eq!(hashed_part(b"a{b"), b"a{b");
        assert_eq!(hashed_part(b"x{{y}z"), b"{y");
    }
}
