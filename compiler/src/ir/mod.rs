//! The resolved program: every name resolved to an id. Each action body is
//! kept twice, from one resolution: as a tree of effectful nodes in
//! evaluation order ([`Block`], what the step rules read) and, when the
//! resolution is asked for it (`resolve::Lowering::Code`, the runtime), as
//! typed code ([`code::Body`], what the runtime interprets). The type table
//! ([`types`]) serves both.
//!
//! Ids index the vectors of [`Program`]. All vectors are in a deterministic
//! order (by unit, then source position), never in hash or thread order.

pub mod code;
pub mod spans;
pub mod test;
pub mod types;

use crate::index::IndexVec;
use crate::intern::Name;
use crate::manifest::{AnswerMatch, NewKeyOn};
use crate::span::Span;

pub use types::{FieldDef, FnId, Prim, Ty, TypeDef, TypeId, TypeKind, Types};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PkgId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ActionId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FailureId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntityId(pub u32);

crate::idx!(PkgId, OpId, ActionId, FailureId, EventId, EntityId);

#[derive(Clone, Debug, Default)]
pub struct Program {
    pub app: AppSettings,
    pub packages: IndexVec<PkgId, Package>,
    pub operations: IndexVec<OpId, Operation>,
    pub actions: IndexVec<ActionId, Action>,
    pub failures: IndexVec<FailureId, Failure>,
    pub events: IndexVec<EventId, Event>,
    pub entities: IndexVec<EntityId, Entity>,
    pub entries: Vec<Entry>,
    /// Every declared type, indexed by [`TypeId`].
    pub types: IndexVec<TypeId, TypeDef>,
    /// Every function, indexed by [`FnId`].
    pub functions: IndexVec<FnId, code::Function>,
    /// The app's config entries, in name order.
    pub config: Vec<ConfigEntry>,
    pub fixtures: IndexVec<test::FixtureId, test::Fixture>,
    /// Tests in source order (files by path, then position).
    pub tests: Vec<test::Test>,
    /// Which context everything outside action bodies is: a resolution
    /// that keeps the last one's context (an edit inside bodies, a comment,
    /// a blank line) keeps its revision, so whatever was computed from the
    /// declarations alone still holds (see [`Revision`]).
    pub context: Revision,
}

/// Lookups by an id of this program, which its resolver made: always in
/// range (see [`IndexVec`]'s indexing).
#[allow(clippy::indexing_slicing)]
impl Program {
    pub fn op(&self, id: OpId) -> &Operation {
        &self.operations[id]
    }
    pub fn action(&self, id: ActionId) -> &Action {
        &self.actions[id]
    }
    pub fn failure(&self, id: FailureId) -> &Failure {
        &self.failures[id]
    }
    pub fn event(&self, id: EventId) -> &Event {
        &self.events[id]
    }
    pub fn entity(&self, id: EntityId) -> &Entity {
        &self.entities[id]
    }
    pub fn package(&self, id: PkgId) -> &Package {
        &self.packages[id]
    }
    pub fn function(&self, id: FnId) -> &code::Function {
        &self.functions[id]
    }
    /// The standard library's failure of a kind (`InvalidValue`, ...).
    pub fn standard_failure(&self, kind: FailureKind) -> FailureId {
        let at = self
            .failures
            .iter()
            .position(|f| f.owner == Owner::Stdlib && f.kind == kind)
            .unwrap_or_default();
        FailureId(at as u32)
    }
    pub fn type_table(&self) -> Types<'_> {
        Types(&self.types)
    }
    /// How a type is written in messages, package types qualified.
    pub fn type_name(&self, ty: &Ty) -> String {
        self.type_table().name(ty, &self.packages)
    }
}

/// `steps_key: StepsKey { binding: "STEPS_KEY" secret: true }`
#[derive(Clone, Debug)]
pub struct ConfigEntry {
    pub name: Name,
    pub ty: Ty,
    pub secret: bool,
    /// The environment variable its value comes from (`binding:`).
    pub binding: Option<String>,
    /// `default:` as text, when it is a literal.
    pub default: Option<String>,
    pub span: Span,
}

/// Who declared something.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    App,
    /// The standard library (`clock`, `ai`, standard failures).
    Stdlib,
    Package(PkgId),
}

#[derive(Clone, Debug, Default)]
pub struct AppSettings {
    pub name: String,
    /// `application X { ... }`, when declared.
    pub span: Option<Span>,
    /// `events: { store: primary }`
    pub events_store: Option<(Name, Span)>,
    /// `steps: { encryption_key: config.x }`
    pub encryption_key: Option<EncryptionKey>,
    /// `providers: { stripe: { api_key: config.stripe_key } }`, in the
    /// order written.
    pub providers: Vec<ProviderSettings>,
}

/// One package's entry under `providers:`.
#[derive(Clone, Debug)]
pub struct ProviderSettings {
    pub package: PkgId,
    /// The package's name in `providers:`.
    pub span: Span,
    pub given: Vec<ProviderSetting>,
}

/// `api_key: config.stripe_key`
#[derive(Clone, Debug)]
pub struct ProviderSetting {
    pub name: String,
    /// The config entry it comes from.
    pub config: Name,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct EncryptionKey {
    pub span: Span,
    /// The config entry that holds the key.
    pub name: Name,
    /// Whether the named config entry says `secret: true`.
    pub secret: bool,
    /// The config entry's declaration.
    pub config_span: Option<Span>,
}

#[derive(Clone, Debug)]
pub struct Package {
    pub name: Name,
    pub version: String,
    /// The `package.yaml` file's span of its `package:` line.
    pub manifest_span: Span,
    pub idempotency: Option<IdempotencyFacts>,
    /// Timeout and attempts defaults from `provider:`.
    pub timeout_ms: u64,
    pub attempts: u32,
    /// `provider.http`: how the provider is called for real.
    pub http: Option<crate::http::HttpProvider>,
    /// The package has errors of its own (reported when the package is
    /// checked; an app using it gets one diagnostic naming it).
    pub has_errors: bool,
}

#[derive(Clone, Debug)]
pub struct IdempotencyFacts {
    pub header: String,
    pub window_ms: u64,
    pub replays_failures: bool,
    pub new_key_on: NewKeyOn,
    pub in_use: Option<AnswerMatch>,
    pub mismatch: Option<AnswerMatch>,
}

/// A provider operation, or `ai.generate` (owned by the stdlib `ai` package).
#[derive(Clone, Debug)]
pub struct Operation {
    pub package: PkgId,
    /// `customers.create`
    pub name: String,
    /// `stripe.customers.create`
    pub qualified: String,
    /// Its entry in `package.yaml`.
    pub span: Span,
    pub changes: bool,
    pub idempotent: bool,
    /// Takes the provider's key (`idempotent` and not `keyed: false`).
    pub keyed: bool,
    pub failures: Vec<FailureId>,
    pub already_undone: Vec<FailureId>,
    pub large_output: bool,
    pub timeout_ms: u64,
    pub attempts: u32,
    /// How long the provider keeps this operation's key: its own `window:`,
    /// else the provider's. `None` when it is sent without a key.
    pub window_ms: Option<u64>,
    /// `check:` from `package.yaml`: what an operator checks at the
    /// provider when a send is in doubt.
    pub check: Option<String>,
    pub request: Ty,
    /// `Unit` for an operation with no `answer:`.
    pub answer: Ty,
    /// How it is sent over HTTP, when its package says.
    pub http: Option<HttpOperation>,
}

/// An operation's `http:`, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpOperation {
    pub method: crate::http::Method,
    pub path: Vec<crate::http::PathPart>,
    pub encoding: crate::http::Encoding,
    /// Declared field name, wire name: exceptions to the binding's case,
    /// wherever the field appears in the request or the answer.
    pub rename: Vec<(String, String)>,
    /// The statuses each failure's code is recognised under; a failure not
    /// listed is recognised under any 4xx.
    pub failures: Vec<(FailureId, Vec<u16>)>,
    /// `body_field:`: the request field whose value is the whole body (a
    /// provider that takes a bare list).
    pub body_field: Option<String>,
    /// `answer_field:`: the answer field the whole body fills (a provider
    /// that answers a bare list).
    pub answer_field: Option<String>,
}

impl HttpOperation {
    /// How a declared field is written on the wire.
    pub fn wire_name(&self, case: crate::http::Case, field: &str) -> String {
        match self.rename.iter().find(|(f, _)| f == field) {
            Some((_, wire)) => wire.clone(),
            None => case.apply(field),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FailureKind {
    InvalidRequest,
    InvalidValue,
    NotFound,
    Conflict,
    Rejected,
    RateLimited,
    Unavailable,
    TimedOut,
    OutcomeUnknown,
    Misconfigured,
    InternalFault,
}

impl FailureKind {
    pub const ALL: [FailureKind; 11] = [
        FailureKind::InvalidRequest,
        FailureKind::InvalidValue,
        FailureKind::NotFound,
        FailureKind::Conflict,
        FailureKind::Rejected,
        FailureKind::RateLimited,
        FailureKind::Unavailable,
        FailureKind::TimedOut,
        FailureKind::OutcomeUnknown,
        FailureKind::Misconfigured,
        FailureKind::InternalFault,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::InvalidRequest => "InvalidRequest",
            FailureKind::InvalidValue => "InvalidValue",
            FailureKind::NotFound => "NotFound",
            FailureKind::Conflict => "Conflict",
            FailureKind::Rejected => "Rejected",
            FailureKind::RateLimited => "RateLimited",
            FailureKind::Unavailable => "Unavailable",
            FailureKind::TimedOut => "TimedOut",
            FailureKind::OutcomeUnknown => "OutcomeUnknown",
            FailureKind::Misconfigured => "Misconfigured",
            FailureKind::InternalFault => "InternalFault",
        }
    }

    /// `Unavailable` and `RateLimited` pass through every match that does not
    /// name them and are never listed in `fails`.
    pub fn is_transient(self) -> bool {
        matches!(self, FailureKind::Unavailable | FailureKind::RateLimited)
    }
}

#[derive(Clone, Debug)]
pub struct Failure {
    pub owner: Owner,
    /// As the app writes it: `PaymentRefused`, `stripe.CardDeclined`,
    /// `Unavailable` for the standard ones.
    pub qualified: String,
    pub kind: FailureKind,
    /// `None` for the standard failure kinds.
    pub span: Option<Span>,
    /// Its `code:` (the kind's name for the standard ones).
    pub code: String,
    /// Fields given by `reject F { field: value }`.
    pub fields: Vec<types::FieldDef>,
}

#[derive(Clone, Debug)]
pub struct Event {
    pub owner: Owner,
    pub qualified: String,
    pub fields: Vec<EventField>,
    pub span: Span,
    /// The event's record type.
    pub ty: TypeId,
}

#[derive(Clone, Debug)]
pub struct EventField {
    pub name: Name,
    /// Worst-case size in bytes of the field's JSON value under the encoding
    /// in `spec/`, or `None` when the type declares no bound.
    pub max_json_bytes: Option<u64>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Entity {
    pub owner: Owner,
    pub qualified: String,
    pub store: Option<Name>,
    pub span: Span,
    /// The entity's record type; its first field is the key.
    pub ty: TypeId,
}

#[derive(Clone, Debug)]
pub struct Action {
    pub owner: Owner,
    pub name: Name,
    /// `subscribe`, `stripe.subscribe_customer`, or `route POST /x` for an
    /// inline route action.
    pub qualified: String,
    pub public: bool,
    /// The whole declaration.
    pub span: Span,
    /// The name in the header (the primary span of per-action findings).
    pub name_span: Span,
    /// `fails` entries as written.
    pub fails: Vec<(FailureId, Span)>,
    pub declines: Vec<Decline>,
    pub body: Block,
    /// Which checked body `body` is (see [`Revision`]).
    pub revision: Revision,
    pub params: Vec<(Name, Ty)>,
    pub ret: Ty,
    /// The body as code; parameters are its first locals.
    pub code: code::Body,
    /// The config entries its body reads, and the functions it calls
    /// (tests check that a fixture gives what the code they reach reads).
    pub reads: Reads,
}

/// Which checked body an action holds. Two actions, of any two programs
/// of one process, with the same revision other than [`Revision::UNKNOWN`]
/// hold the same body: the resolver kept it from the last resolution
/// (`resolve_cached`), so whatever was computed from the one holds for the
/// other without reading it again. A body checked afresh gets a new
/// revision; a resolution that keeps nothing gives none.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Revision(u64);

/// Without the number, which depends on what the process resolved before
/// and on whether a cache was kept: a program's `Debug` text is the same
/// whether its bodies were kept or checked afresh (tests compare the two
/// that way).
impl std::fmt::Debug for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Revision")
    }
}

impl Revision {
    pub const UNKNOWN: Revision = Revision(0);

    /// A revision no body had before (ids are never reused in a process,
    /// so caches of any age can compare them).
    pub fn fresh() -> Revision {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Revision(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    pub fn is_known(self) -> bool {
        self != Revision::UNKNOWN
    }
}

/// The config entries and functions a body uses directly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    pub config: Vec<Name>,
    pub functions: Vec<FnId>,
    /// Actions it calls (their own reads are theirs).
    pub actions: Vec<ActionId>,
    /// The fields it looks an entity's rows up by (`where:` of `query`,
    /// `update` and `delete`), each list in the order written: the
    /// store's indexes.
    pub queries: Vec<(EntityId, Vec<Name>)>,
}

#[derive(Clone, Debug)]
pub struct Decline {
    pub code: String,
    pub reason: String,
    pub span: Span,
}

#[derive(Clone, Debug, Default, Hash)]
pub struct Block {
    pub nodes: Vec<Node>,
}

impl Block {
    /// Calls `f` on every node of the block, nested ones included, in
    /// evaluation order (a node before the blocks inside it). The one
    /// walk over a body; a walk that needs more (the loops around a node,
    /// paths) recurses through [`Node::blocks`].
    pub fn for_each_node<'b>(&'b self, f: &mut dyn FnMut(&'b Node)) {
        for node in &self.nodes {
            f(node);
            for inner in node.blocks() {
                inner.for_each_node(f);
            }
        }
    }
}

#[derive(Clone, Debug, Hash)]
pub enum Node {
    /// An outside call, an action call or a write, with how its failures are
    /// handled.
    Effect(Effect),
    Emit(Emit),
    /// `reject F`: ends the path with a failure.
    Reject(Reject),
    /// `return`: ends the path.
    Return(Span),
    /// `if` with both branches (a missing `else` is an empty block).
    If {
        span: Span,
        then_block: Block,
        else_block: Block,
    },
    /// `for ... [max N]`
    Loop {
        span: Span,
        /// `for code in codes max 10`: the header without the body, the
        /// smallest span naming the loop.
        head: Span,
        max: Option<u32>,
        body: Block,
    },
}

impl Node {
    /// The blocks directly inside this node, in evaluation order: a
    /// `match`'s arms, an `if`'s branches, a loop's body.
    pub fn blocks(&self) -> impl Iterator<Item = &Block> {
        let arms: &[Arm] = match self {
            Node::Effect(Effect {
                handling: Handling::Match(arms),
                ..
            }) => arms,
            _ => &[],
        };
        let (first, second) = match self {
            Node::If {
                then_block,
                else_block,
                ..
            } => (Some(then_block), Some(else_block)),
            Node::Loop { body, .. } => (Some(body), None),
            _ => (None, None),
        };
        arms.iter().map(|a| &a.body).chain(first).chain(second)
    }
}

#[derive(Clone, Debug, Hash)]
pub struct Effect {
    /// The callee as written (`stripe.customers.create`) or `create Entity`:
    /// the smallest span naming the effect.
    pub span: Span,
    pub target: Target,
    pub handling: Handling,
}

#[derive(Clone, Debug, Hash)]
pub enum Target {
    Op(OpId),
    Action(ActionId),
    Write(Write),
    /// Code that can fail but is neither an outside call nor a write.
    Check(Check),
}

/// A validated construction of a computed value (fails with `InvalidValue`)
/// or a `query required` (fails with its `missing:` failure): for the step
/// rules, a point that can end the action, like a write naming a failure;
/// never an outside call, a step or a write.
#[derive(Clone, Debug, Hash)]
pub struct Check {
    pub failure: FailureId,
    /// The entity read, for `query required`.
    pub query: Option<EntityId>,
}

#[derive(Clone, Debug, Hash)]
pub struct Write {
    pub kind: WriteKind,
    pub entity: EntityId,
    /// Failures the write names (`conflict:`, `missing:`) with their spans.
    pub failures: Vec<(FailureId, Span)>,
    /// A `create` whose key (the entity's first field) is computed from the
    /// action's parameters and constants alone: a second run with the same
    /// input (an event delivered twice) creates the same key.
    pub keyed_by_input: bool,
    /// The action queries the entity before its first outside or action
    /// call: it can see a row an earlier run stored, and end early.
    pub read_first: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WriteKind {
    Create,
    Update,
    Delete,
}

#[derive(Clone, Debug, Hash)]
pub enum Handling {
    /// `attempt e`: every failure passes on.
    Attempt(Span),
    /// `match e { arms }`: the effect, then one of the arms.
    Match(Vec<Arm>),
    /// Neither; the resolver already reported it. Treated like `attempt`.
    Unhandled,
}

#[derive(Clone, Debug, Hash)]
pub struct Arm {
    pub span: Span,
    pub pattern: ArmPattern,
    /// Effects inside the arm's body, in order.
    pub body: Block,
    pub end: ArmEnd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArmPattern {
    Success,
    Failure(FailureId),
}

#[derive(Clone, Debug, Hash)]
pub enum ArmEnd {
    /// The arm yields a value: the failure is handled.
    Value,
    /// `reject G`
    Reject(Reject),
    /// `propagate`
    Propagate(Span),
}

#[derive(Clone, Debug, Hash)]
pub struct Reject {
    pub span: Span,
    pub failure: FailureId,
}

#[derive(Clone, Debug, Hash)]
pub struct Emit {
    pub span: Span,
    /// `emit Remind`: the keyword and the event, the smallest span naming
    /// the emit.
    pub head: Span,
    pub event: EventId,
    /// Payload fields as written, with literal text where it is a literal.
    pub fields: Vec<EmitField>,
    /// `with { }` options as written.
    pub options: Vec<EmitOption>,
}

#[derive(Clone, Debug, Hash)]
pub struct EmitField {
    pub name: Name,
    /// `name: value`
    pub span: Span,
    /// The value alone.
    pub value_span: Span,
    /// The value when it is a string literal (checked for NUL).
    pub literal: Option<String>,
}

#[derive(Clone, Debug, Hash)]
pub struct EmitOption {
    pub key: Name,
    pub key_span: Span,
    pub value: OptionValue,
    /// `key: value`
    pub span: Span,
    /// The value alone.
    pub value_span: Span,
}

/// An option's value: a literal the checker can judge, or `Computed`, which is
/// recorded in the plan as checked at staging time.
#[derive(Clone, Debug, PartialEq, Hash)]
pub enum OptionValue {
    Int(i64),
    Str(String),
    Bool(bool),
    /// `clock.now + 1h` and other values known only at run time.
    Computed,
    List(Vec<(OptionValue, Span)>),
    /// Entries with the span of each entry's value.
    Record(Vec<(Name, OptionValue, Span)>),
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub kind: EntryKind,
    /// `route POST /subscriptions`, `subscriber start_subscription`,
    /// `schedule nightly_reconcile`.
    pub label: String,
    /// What names it: `POST /subscriptions/{id}`, or a subscriber's or a
    /// schedule's name.
    pub span: Span,
    /// The `run:` call or `action:` block.
    pub run_span: Span,
    /// `None` when `run:` could not be resolved (already reported).
    pub action: Option<ActionId>,
    /// The arguments of `run:` as code, over the entry's values: local 0 is
    /// `input` or `event`, local 1 a route's `path`.
    pub run_args: Vec<code::Expr>,
}

impl Entry {
    /// A subscriber's name (`start_subscription`), from its label.
    pub fn subscriber_name(&self) -> Option<&str> {
        match self.kind {
            EntryKind::Subscriber { .. } => self.label.strip_prefix("subscriber "),
            _ => None,
        }
    }

    /// A schedule's name (`nightly_reconcile`), from its label.
    pub fn schedule_name(&self) -> Option<&str> {
        match self.kind {
            EntryKind::Schedule { .. } => self.label.strip_prefix("schedule "),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub enum EntryKind {
    Route {
        method: String,
        path: String,
        /// `idempotency_key: required`
        key_required: bool,
        /// The `idempotency_key:` setting, when present.
        key_span: Option<Span>,
        deadline_ms: Option<u64>,
        deadline_span: Option<Span>,
        /// `auth: required`
        auth_required: bool,
        /// The `input:`, `path:` and `output:` types of a route that runs
        /// an action by `run:`; an inline `action:` block's are its own
        /// parameters (`input`, `path`) and result.
        input: Option<Ty>,
        path_values: Option<Ty>,
        output: Option<Ty>,
    },
    Subscriber {
        event: Option<EventId>,
    },
    Schedule {
        /// `every D`, in milliseconds (0 when it was not a duration).
        every_ms: u64,
    },
}
