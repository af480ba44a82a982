//! The ledger of bad messages. Anyone who meets a vague, misplaced or
//! misleading diagnostic adds an entry here (what was seen, where, and what
//! it should say); whoever fixes it deletes the entry and adds a fixture
//! under `tests/fixtures/` that pins the better message.
//!
//! The ledger is a to-do list, not an allow-list: nothing is skipped because
//! of it. The test only keeps entries well-formed.

/// One bad message.
struct KnownBad {
    /// The code as printed, e.g. `syntax.expected`.
    code: &'static str,
    /// Where it was seen: a fixture path or a short program.
    seen_in: &'static str,
    /// What is wrong with it and what it should say instead.
    problem: &'static str,
}

const LEDGER: &[KnownBad] = &[];

#[test]
fn ledger_entries_name_a_code_a_place_and_the_problem() {
    for entry in LEDGER {
        let well_formed_code = entry
            .code
            .split_once('.')
            .is_some_and(|(family, name)| !family.is_empty() && !name.is_empty());
        assert!(
            well_formed_code,
            "`{}` is not a `family.name` code",
            entry.code
        );
        assert!(
            !entry.seen_in.trim().is_empty(),
            "{}: say where it was seen",
            entry.code
        );
        assert!(
            entry.problem.len() >= 20,
            "{}: say what is wrong and what it should say",
            entry.code
        );
    }
}
