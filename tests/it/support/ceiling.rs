//! The per-filter memory ceiling (`bf.max-filter-bytes`) as the tests meet it.

use super::{RawConnection, Reply};

/// The reply to a creation or growth the ceiling refuses.
pub const TOO_LARGE: &str = "ERR filter would exceed the max-filter-bytes limit";

/// Under a ceiling lowered to 1 MiB, the creation `fits` (the largest under it) answers
/// OK and `refused` (the next size up) is [`TOO_LARGE`].
pub fn largest_under_one_mib(conn: &mut RawConnection, fits: &[&str], refused: &[&str]) {
    assert_eq!(
        conn.call(&["CONFIG", "SET", "bf.max-filter-bytes", "1048576"]),
        Reply::ok()
    );
    assert_eq!(conn.call(fits), Reply::ok(), "{fits:?}");
    assert_eq!(
        conn.call(refused),
        Reply::Error(TOO_LARGE.into()),
        "{refused:?}"
    );
}
