//! Repeated parsing must not grow memory (issue #9): an editor session
//! parses the same files thousands of times.

use jadpo_compiler::parser::parse_file;
use jadpo_compiler::span::FileId;

const SOURCE: &str = r#"
type Quantity = Int { min: 1 max: 100 }

failure Refused {
    kind: Rejected
    code: "refused"
}

action charge(request: Order) fails Refused -> Int {
    var total = request.quantity * 37 + request.amount / 3
    if total > 100 and not request.free {
        reject Refused { reason: "too much" }
    }
    var seen = attempt stripe.prices.retrieve(stripe.PriceRef { id: request.price })
    return total
}

function broken(x: Int) -> Int {
    return x +
}
"#;

/// Resident memory of this process, in bytes (Linux only).
fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn parsing_the_same_file_again_and_again_does_not_grow_memory() {
    // The file has a syntax error, so both the fast and the full grammar run.
    let (_, diags) = parse_file(FileId(0), SOURCE);
    assert!(!diags.is_empty());
    for _ in 0..200 {
        parse_file(FileId(0), SOURCE);
    }
    let Some(before) = resident() else {
        return;
    };
    for _ in 0..2_000 {
        parse_file(FileId(0), SOURCE);
    }
    let after = resident().unwrap_or(before);
    let grown = after.saturating_sub(before);
    // A leak of the parser graph was ~40 KB per parse: 80 MB here.
    assert!(
        grown < 8 * 1024 * 1024,
        "memory grew by {grown} bytes over 2,000 parses"
    );
}
