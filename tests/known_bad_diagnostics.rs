//! The ledger of bad messages. Anyone who meets a vague, misplaced or
//! misleading diagnostic adds an entry here (what was seen, where, and what
//! it should say); whoever fixes it deletes the entry and adds a fixture
//! under `tests/fixtures/` that pins the better message.
//!
//! The ledger is executable, as PRQL's `bad_error_messages.rs` is: each
//! entry's program is checked and its current output for that code is
//! snapshotted (`tests/snapshots/it__known_bad_diagnostics__*.snap`), so
//! improving a message shows up as a snapshot change, and a message that
//! is gone fails the test until its entry is removed. Nothing is skipped
//! because of the ledger.

use crate::common::{package_findings, Fixture};
use jadpo::render::human;

/// One bad message.
struct KnownBad {
    /// The code as printed, e.g. `syntax.expected`.
    code: &'static str,
    /// The app folder holding the program, relative to the repository.
    app: &'static str,
    /// The file of that app the diagnostic is in.
    file: &'static str,
    /// What is wrong with it and what it should say instead.
    problem: &'static str,
}

/// The known weak messages (found on 2026-12-04 by reading every
/// diagnostic the fixtures render for a missing reason, a missing fix, or
/// a summary that leaves out what the author wrote). The entries fixed
/// before (labels on the callee path, a label on `find_price`, one
/// `already_undone` diagnostic, one label where step.context drew two at
/// one span; on 2026-12-04 `package.no_matching_version`'s loader notation,
/// repeated label and missing fix, `name.unknown_field`'s generic fix, now
/// the record's fields and its declaration, and `manifest.bad_duration`'s
/// missing reason) are pinned in fixtures.
const LEDGER: &[KnownBad] = &[KnownBad {
    code: "type.mismatch",
    app: "tests/fixtures/names/type/mismatch/fail_reject_field_type.jadpo",
    file: "fail_reject_field_type.jadpo",
    problem: "`expected `Text`, found `Int`` does not name the field or the failure: it \
                  should say that field `reason` of `PaymentRefused` is a `Text`, with a \
                  related label at the field's declaration",
}];

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
            entry.problem.len() >= 20,
            "{}: say what is wrong and what it should say",
            entry.code
        );
    }
}

/// Each entry's current output, snapshotted; an entry whose message is
/// gone fails here.
#[test]
fn ledger_entries_show_their_current_output() {
    for entry in LEDGER {
        let app = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(entry.app);
        let fixture = Fixture::load(&app);
        let outcome = fixture.check();
        let (package_files, package_diags) = package_findings(&fixture);
        let found: Vec<String> = outcome
            .diagnostics
            .iter()
            .map(|d| (&outcome.files, d))
            .chain(package_diags.iter().map(|d| (&package_files, d)))
            .filter(|(files, d)| {
                d.code == entry.code && files.get(d.span.file).path.ends_with(entry.file)
            })
            .map(|(files, d)| human::render(files, d, false))
            .collect();
        assert!(
            !found.is_empty(),
            "`{}` no longer appears in {}/{}: if the message was fixed, delete its ledger entry \
             and pin the better message in a fixture",
            entry.code,
            entry.app,
            entry.file
        );
        let stem = entry.file.rsplit('/').next().unwrap_or(entry.file);
        let name = format!("{}__{}", entry.code, stem.replace('.', "_"));
        insta::assert_snapshot!(name, found.join("\n"));
    }
}
