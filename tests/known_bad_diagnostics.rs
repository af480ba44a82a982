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

const LEDGER: &[KnownBad] = &[
    KnownBad {
        code: "step.context",
        seen_in: "examples/mistakes/src/route_without_key.jadpo",
        problem: "the related label `runs `open_account`` sits on the same span as the primary \
                  label, so the frame draws two arrows at one place; fold it into the primary label",
    },
    KnownBad {
        code: "step.unkeyed",
        seen_in: "examples/mistakes/src/unkeyed_call.jadpo",
        problem: "labels span the whole multi-line call `attempt stripe.charges.create(... { })`, \
                  drawing tall multi-line frames; the callee path `stripe.charges.create` is enough \
                  (same in step.context, step.late_failure and effect.call_in_loop)",
    },
    KnownBad {
        code: "failure.missing_in_fails",
        seen_in: "examples/mistakes/src/missing_fails.jadpo",
        problem: "the primary span (the action's name) has no label, so the frame shows an empty \
                  arrow; label it, e.g. `fails` of `find_price` does not list `stripe.PriceMissing`",
    },
    KnownBad {
        code: "package.already_undone_unlisted",
        seen_in: "tests/fixtures/packages/package/already_undone_unlisted/\
                  fail_not_a_failure_of_the_operation",
        problem: "one mistake gives two diagnostics at the same span with different wording \
                  (one from loading, one from resolution); keep one",
    },
];

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
