//! SF values written by encoding 2 (the standard ribbon, before the homogeneous ribbon of
//! encoding 3): `tests/fixtures/sf-encoding-2/` holds what `tests/fixtures/sf-encoding-1/`
//! holds for encoding 1 (an RDB file, DUMP payloads, SCANDUMP pieces and every answer),
//! made by the last build whose SF.BUILD wrote encoding 2. Each must still load and answer
//! exactly so. The writer ran once with that build; never rewrite its output.

use super::encoding1::{
    dumps_and_chunks_load_and_answer_as_they_did, rdb_loads_and_answers_as_it_did, write_fixture,
};

#[test]
fn encoding2_rdb_loads_and_answers_as_it_did() {
    rdb_loads_and_answers_as_it_did(2);
}

#[test]
fn encoding2_dumps_and_chunks_load_and_answer_as_they_did() {
    dumps_and_chunks_load_and_answer_as_they_did(2);
}

#[test]
#[ignore = "writes the encoding-2 fixture: ran once, with the build whose SF.BUILD wrote encoding 2"]
fn write_the_encoding2_fixture() {
    write_fixture(2);
}
