//! Resolved tests and fixtures (design `testing.md` section 8): what `jadpo
//! test` runs. Checked like any other item; never planned, and never seen
//! by the step rules. Their expressions are code, built only when the
//! resolution lowers code.

use crate::intern::Name;
use crate::span::Span;

pub use super::code::Count;
use super::code::{Expr, Local};
use super::{ActionId, EventId, FailureId, OpId, Owner, PkgId};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FixtureId(pub u32);

crate::idx!(FixtureId);

#[derive(Clone, Debug)]
pub struct Fixture {
    pub name: Name,
    pub span: Span,
    /// `clock:`, RFC 3339; `None` for the default `2026-01-01T00:00:00Z`.
    pub clock: Option<String>,
    /// `config:`, each entry's value.
    pub config: Vec<(Name, Expr)>,
    pub retry_after_ms: i64,
    pub attempts: u32,
    pub fakes: Vec<Fake>,
}

/// The clock of a test without a fixture, or of a fixture without `clock:`.
pub const DEFAULT_CLOCK: &str = "2026-01-01T00:00:00Z";
pub const DEFAULT_RETRY_AFTER_MS: i64 = 60_000;
pub const DEFAULT_ATTEMPTS: u32 = 5;

/// `fake PKG { op => ANSWER ... }`
#[derive(Clone, Debug)]
pub struct Fake {
    pub package: PkgId,
    pub answers: Vec<FakeAnswer>,
}

#[derive(Clone, Debug)]
pub struct FakeAnswer {
    pub op: OpId,
    pub answer: AnswerCode,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum AnswerCode {
    /// A construction of the operation's answer type.
    Value(Expr),
    Done,
    /// `fail F { fields }`, F one of the operation's failures or
    /// `Unavailable`/`RateLimited`.
    Fail {
        failure: FailureId,
        fields: Vec<(Name, Expr)>,
    },
    Lost(Box<AnswerCode>),
    InUse,
    ServerError,
}

#[derive(Clone, Debug)]
pub struct Test {
    pub name: String,
    /// The name's span.
    pub span: Span,
    /// The app's test, or a package's own.
    pub owner: Owner,
    pub fixture: Option<FixtureId>,
    pub steps: Vec<TestStep>,
    /// Local slots the test's `var`s use.
    pub locals: u32,
}

#[derive(Clone, Debug)]
pub struct TestStep {
    pub kind: TestStepKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TestStepKind {
    /// `var x = e`
    Set(Local, Expr),
    Deliver(Delivery),
    Assert(Expr),
    /// `advance clock by D`
    Advance(Expr),
}

#[derive(Clone, Debug)]
pub struct Delivery {
    /// `var x = call ...`: the answer's slot.
    pub bind: Option<Local>,
    pub target: DeliveryTarget,
    pub expect: Expect,
}

#[derive(Clone, Debug)]
pub enum DeliveryTarget {
    /// `call f(args)`
    Call { action: ActionId, args: Vec<Expr> },
    /// `deliver Ev { ... } [to NAME]`: the entries (subscribers) it runs,
    /// in source order.
    Deliver {
        event: EventId,
        payload: Expr,
        entries: Vec<usize>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Complete,
    Fails(FailureId),
    Ends(Ending),
}

/// `ends outcome_unknown | diverged | retry_later | fault`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    OutcomeUnknown,
    Diverged,
    RetryLater,
    Fault,
}

impl Ending {
    pub const ALL: [(Ending, &'static str); 4] = [
        (Ending::OutcomeUnknown, "outcome_unknown"),
        (Ending::Diverged, "diverged"),
        (Ending::RetryLater, "retry_later"),
        (Ending::Fault, "fault"),
    ];

    pub fn as_str(self) -> &'static str {
        Ending::ALL
            .iter()
            .find(|(e, _)| *e == self)
            .map_or("", |(_, s)| s)
    }
}
