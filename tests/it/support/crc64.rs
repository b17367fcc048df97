//! Redis' CRC64, the checksum DUMP payloads end with.

/// Redis' CRC64 (Jones polynomial, reflected, as `crc64(0, data)` in src/crc64.c), which
/// DUMP payloads end with (little-endian).
pub fn crc64_jones(data: &[u8]) -> u64 {
    const POLY_REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut crc = 0u64;
    for &byte in data {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY_REFLECTED
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// A DUMP payload with its trailing CRC64 recomputed for `body` (everything before it).
pub fn with_crc(body: &[u8]) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend_from_slice(&crc64_jones(body).to_le_bytes());
    out
}
