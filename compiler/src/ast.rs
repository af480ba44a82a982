//! The syntax tree of one `.jadpo` file. Every node carries a byte [`Span`].
//!
//! Parsing never fails: a production that could not be read becomes an
//! `Error` node (its diagnostic was already emitted), and later phases skip
//! `Error` nodes silently so one mistake gives one diagnostic.

use crate::intern::Name;
use crate::span::{FileId, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: Name,
    pub span: Span,
}

/// A dotted name: `stripe.customers.create`, `request.price`, `Quantity`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub segments: Vec<Ident>,
    pub span: Span,
}

impl Path {
    pub fn last(&self) -> Option<Ident> {
        self.segments.last().copied()
    }

    pub fn text(&self) -> String {
        // Most paths are one word: no list of parts to join.
        if let [one] = self.segments.as_slice() {
            return one.name.as_str().to_string();
        }
        let parts: Vec<&str> = self.segments.iter().map(|s| s.name.as_str()).collect();
        parts.join(".")
    }
}

#[derive(Clone, Debug)]
pub struct SourceFileAst {
    pub file: FileId,
    pub items: Vec<Item>,
}

#[derive(Clone, Debug)]
pub enum Item {
    Application(Application),
    Config(ConfigDecl),
    Store(StoreDecl),
    Type(TypeDecl),
    Entity(EntityDecl),
    Failure(FailureDecl),
    Event(EventDecl),
    Action(ActionDecl),
    Function(FunctionDecl),
    Route(RouteDecl),
    Subscriber(SubscriberDecl),
    Schedule(ScheduleDecl),
    Fixture(FixtureDecl),
    Test(TestDecl),
    /// A declaration that could not be read; already diagnosed.
    Error(Span),
}

impl Item {
    /// The source an item covers, its `decline` lines included.
    pub fn span(&self) -> Span {
        match self {
            Item::Application(a) => a.span,
            Item::Config(c) => c.span,
            Item::Store(s) => s.span,
            Item::Type(t) => t.span,
            Item::Entity(e) => e.span,
            Item::Failure(f) => f.span,
            Item::Event(e) => e.span,
            Item::Action(a) => a.declines.first().map_or(a.span, |d| d.span.to(a.span)),
            Item::Function(f) => f.span,
            Item::Route(r) => r.span,
            Item::Subscriber(s) => s.span,
            Item::Schedule(s) => s.span,
            Item::Fixture(f) => f.span,
            Item::Test(t) => t.span,
            Item::Error(span) => *span,
        }
    }
}

/// `fixture NAME { clock: "..." config: { ... } retry_after: 1m attempts: 5
/// fake PKG { op.path => ANSWER ... } }`
#[derive(Clone, Debug)]
pub struct FixtureDecl {
    pub name: Ident,
    pub settings: Vec<Setting>,
    pub fakes: Vec<FakeDecl>,
    pub span: Span,
}

/// `fake stripe { customers.create => stripe.Customer { ... } }`
#[derive(Clone, Debug)]
pub struct FakeDecl {
    pub package: Ident,
    pub answers: Vec<FakeAnswer>,
    pub span: Span,
}

/// `op.path => ANSWER`
#[derive(Clone, Debug)]
pub struct FakeAnswer {
    pub op: Path,
    pub answer: Answer,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Answer {
    pub kind: AnswerKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum AnswerKind {
    /// A construction of the operation's answer type.
    Value(Expr),
    Done,
    Fail {
        failure: Path,
        fields: Option<Vec<FieldInit>>,
    },
    Lost(Box<Answer>),
    InUse,
    ServerError,
}

/// `test "NAME" [using FIXTURE] { statements }`
#[derive(Clone, Debug)]
pub struct TestDecl {
    pub name: StringLit,
    pub using: Option<Ident>,
    pub body: Vec<TestStmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct TestStmt {
    pub kind: TestStmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TestStmtKind {
    /// `var x = e`
    Var {
        name: Ident,
        value: Expr,
    },
    /// `[var x =] call f(args) [fails F | ends OUTCOME]`, `deliver Ev { }
    /// [to NAME] [fails F | ends OUTCOME]`
    Delivery(DeliveryStmt),
    Assert(Expr),
    /// `advance clock by D`
    Advance(Expr),
    Error,
}

#[derive(Clone, Debug)]
pub struct DeliveryStmt {
    /// `var x = call ...`
    pub bind: Option<Ident>,
    pub target: DeliveryTarget,
    pub expect: Expect,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum DeliveryTarget {
    Call { action: Ident, args: Vec<Expr> },
    Deliver { event: Expr, to: Option<Ident> },
}

#[derive(Clone, Debug)]
pub enum Expect {
    /// Expected to complete.
    Complete,
    Fails(Path),
    /// `ends outcome_unknown | diverged | retry_later | fault`
    Ends(Ident),
}

/// `name: value`, used by `application`, `store`, `failure`, entry points and
/// `emit ... with { }`.
#[derive(Clone, Debug)]
pub struct Setting {
    pub key: Ident,
    pub value: SettingValue,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum SettingValue {
    Expr(Expr),
    /// `{ key: value ... }`, e.g. `steps: { encryption_key: config.steps_key }`.
    Record(Vec<Setting>, Span),
    /// `action: { statements }` in a route.
    Block(Block),
}

impl SettingValue {
    pub fn span(&self) -> Span {
        match self {
            SettingValue::Expr(e) => e.span,
            SettingValue::Record(_, s) => *s,
            SettingValue::Block(b) => b.span,
        }
    }
}

/// `application Billing { settings }`
#[derive(Clone, Debug)]
pub struct Application {
    pub name: Ident,
    pub settings: Vec<Setting>,
    pub span: Span,
}

/// `config BillingConfig { steps_key: StepsKey { binding: "STEPS_KEY" secret: true } }`
#[derive(Clone, Debug)]
pub struct ConfigDecl {
    pub name: Ident,
    pub fields: Vec<FieldDecl>,
    pub span: Span,
}

/// `store primary { kind: postgres }`
#[derive(Clone, Debug)]
pub struct StoreDecl {
    pub name: Ident,
    pub settings: Vec<Setting>,
    pub span: Span,
}

/// `type PlanCode = Text { max_length: 64 }`
#[derive(Clone, Debug)]
pub struct TypeDecl {
    pub name: Ident,
    pub def: TypeExpr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TypeExprKind {
    /// `Text`, `stripe.Email`, `List<T>`, each with optional constraints
    /// `{ max_length: 64 }`.
    Named {
        path: Path,
        args: Vec<TypeExpr>,
        constraints: Vec<Setting>,
    },
    /// `Enum { basic pro }`
    Enum(Vec<Ident>),
    /// `Object { field: Type ... }`
    Object(Vec<FieldDecl>),
    /// `T?`: a value that may be `none`.
    Optional(Box<TypeExpr>),
    Error,
}

#[derive(Clone, Debug)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

/// `name: Type` with an optional trailing `optional` marker (the field may be
/// left out of a construction).
#[derive(Clone, Debug)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: TypeExpr,
    pub optional: bool,
    pub span: Span,
}

/// `entity Subscription { store: primary  id: stripe.SubscriptionId ... }`.
/// The `store` line is read as a field named `store` whose type is the store's
/// name; the resolver separates it.
#[derive(Clone, Debug)]
pub struct EntityDecl {
    pub name: Ident,
    pub fields: Vec<FieldDecl>,
    pub span: Span,
}

/// `failure PaymentRefused { kind: Rejected code: "payment_refused" reason: Text }`:
/// the `kind:` and `code:` settings, and any other `name: Type` entry as a
/// field (given by `reject F { name: value }`), in the order written.
#[derive(Clone, Debug)]
pub struct FailureDecl {
    pub name: Ident,
    pub entries: Vec<FailureEntry>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum FailureEntry {
    /// `kind: K` or `code: "c"`.
    Setting(Setting),
    Field(FieldDecl),
}

impl FailureDecl {
    pub fn settings(&self) -> impl Iterator<Item = &Setting> {
        self.entries.iter().filter_map(|e| match e {
            FailureEntry::Setting(s) => Some(s),
            FailureEntry::Field(_) => None,
        })
    }

    pub fn fields(&self) -> impl Iterator<Item = &FieldDecl> {
        self.entries.iter().filter_map(|e| match e {
            FailureEntry::Field(f) => Some(f),
            FailureEntry::Setting(_) => None,
        })
    }
}

/// `event SubscriptionStarted { id: stripe.SubscriptionId }`
#[derive(Clone, Debug)]
pub struct EventDecl {
    pub name: Ident,
    pub fields: Vec<FieldDecl>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

/// `decline step.late_failure "reason"` written on the line(s) before an
/// action: declines that warning for the action, with a reason.
#[derive(Clone, Debug)]
pub struct Decline {
    /// The code as written, e.g. `step.late_failure`.
    pub code: Path,
    pub reason: StringLit,
    pub span: Span,
}

/// `[public] action name(params) [fails A, B] -> R { body }`
#[derive(Clone, Debug)]
pub struct ActionDecl {
    pub declines: Vec<Decline>,
    pub public: Option<Span>,
    pub name: Ident,
    pub params: Vec<Param>,
    /// `None` when the header has no `fails` clause.
    pub fails: Option<FailsClause>,
    pub returns: TypeExpr,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct FailsClause {
    pub failures: Vec<Path>,
    pub span: Span,
}

/// `function f(x: T) -> R { body }`: pure.
#[derive(Clone, Debug)]
pub struct FunctionDecl {
    pub name: Ident,
    pub params: Vec<Param>,
    pub returns: TypeExpr,
    pub body: Block,
    pub span: Span,
}

/// `route POST /subscriptions { settings }`. Settings: `auth`,
/// `idempotency_key`, `deadline`, `input`, `output`, `run` or `action: { }`.
#[derive(Clone, Debug)]
pub struct RouteDecl {
    pub method: Ident,
    /// The path as written, e.g. `/subscriptions/{id}`.
    pub path: String,
    pub path_span: Span,
    pub settings: Vec<Setting>,
    pub span: Span,
}

/// `subscriber start_subscription on SubscriptionRequested { run: subscribe(event) }`
#[derive(Clone, Debug)]
pub struct SubscriberDecl {
    pub name: Ident,
    pub event: Path,
    pub settings: Vec<Setting>,
    pub span: Span,
}

/// `schedule nightly_reconcile every 1h { run: reconcile() }`
#[derive(Clone, Debug)]
pub struct ScheduleDecl {
    pub name: Ident,
    pub every: Expr,
    pub settings: Vec<Setting>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `var [mut] x [: T] = e`
    Var {
        mutable: bool,
        name: Ident,
        ty: Option<TypeExpr>,
        value: Expr,
    },
    /// `x = e`
    Assign {
        target: Ident,
        value: Expr,
    },
    /// `if cond { } [else { } | else if ...]`; `else if` is an `If` inside
    /// the else block.
    If {
        cond: Expr,
        then_block: Block,
        else_block: Option<Block>,
    },
    /// `for item in items [max N] { }`
    For {
        item: Ident,
        iterable: Expr,
        max: Option<IntLit>,
        body: Block,
    },
    /// `return [e]`
    Return(Option<Expr>),
    /// `reject F [{ field: value }]`
    Reject(RejectExpr),
    /// `emit Event { fields } [with { options }]`
    Emit(EmitStmt),
    /// An expression used as a statement: `attempt f(x)`, `match ...`,
    /// `attempt create E { }`.
    Expr(Expr),
    Error,
}

#[derive(Clone, Debug)]
pub struct RejectExpr {
    pub failure: Path,
    pub fields: Option<Vec<FieldInit>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct EmitStmt {
    pub event: Path,
    pub fields: Vec<FieldInit>,
    /// The `with { }` block, when present.
    pub options: Option<Vec<Setting>>,
    pub span: Span,
}

/// `field: value` inside a construction.
#[derive(Clone, Debug)]
pub struct FieldInit {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct IntLit {
    pub value: i64,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct StringLit {
    /// The value with escapes decoded.
    pub value: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurationUnit {
    Ms,
    S,
    M,
    H,
    D,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Not,
    Neg,
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(i64),
    /// Decimal literal as written (`12.50`).
    Decimal(String),
    Str(String),
    Bool(bool),
    /// `none`
    None,
    /// `500ms`, `24h`: the amount and its unit.
    Duration(u64, DurationUnit),
    /// A name or dotted name: `request.price`, `clock.now`, `config.steps_key`,
    /// `primary`, `required`. The resolver decides what each segment is.
    Path(Path),
    /// `e.field` where `e` is not a plain path (e.g. `f(x).id`).
    Field(Box<Expr>, Ident),
    /// `callee(args)`; `callee` is usually a `Path`.
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    /// `Type { field: value }` (the type's last segment is UpperCamelCase).
    Construct {
        ty: Box<Path>,
        fields: Vec<FieldInit>,
    },
    /// `[a, b]`
    List(Vec<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `attempt e`: passes e's failures on.
    Attempt(Box<Expr>),
    /// `match e { arms }`
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<MatchArm>,
    },
    /// `create E { fields } [conflict: F]`
    Create {
        entity: Box<Path>,
        fields: Vec<FieldInit>,
        conflict: Option<Box<Path>>,
    },
    /// `update E { where: field == e set: { ... } missing: F conflict: F }`
    Update {
        entity: Box<Path>,
        filter: Box<WhereClause>,
        set: Vec<FieldInit>,
        missing: Option<Box<Path>>,
        conflict: Option<Box<Path>>,
    },
    /// `delete E { where: field == e missing: F }`
    Delete {
        entity: Box<Path>,
        filter: Box<WhereClause>,
        missing: Option<Box<Path>>,
    },
    /// `query optional | required | many E { where: ... missing: F limit: N }`;
    /// the settings are read as fields and judged by the resolver.
    Query {
        mode: QueryMode,
        entity: Box<Path>,
        settings: Vec<FieldInit>,
    },
    /// `stored E`, `sent pkg.op`, `emitted Ev`: counts, in tests only.
    Count {
        kind: CountKind,
        path: Box<Path>,
    },
    /// `reject F { }` in a match arm.
    Reject(Box<RejectExpr>),
    /// `propagate` in a match arm.
    Propagate,
    /// `{ statements }` as a match arm body.
    Block(Block),
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountKind {
    Stored,
    Sent,
    Emitted,
}

impl CountKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CountKind::Stored => "stored",
            CountKind::Sent => "sent",
            CountKind::Emitted => "emitted",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryMode {
    Optional,
    Required,
    Many,
}

impl QueryMode {
    pub fn as_str(self) -> &'static str {
        match self {
            QueryMode::Optional => "optional",
            QueryMode::Required => "required",
            QueryMode::Many => "many",
        }
    }
}

/// `where: field == e`
#[derive(Clone, Debug)]
pub struct WhereClause {
    pub field: Ident,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Pattern {
    /// `success(v)`
    Success(Ident),
    /// `failure F`
    Failure(Path),
}

#[derive(Clone, Debug)]
pub struct MatchArm {
    pub pattern: Pattern,
    pub pattern_span: Span,
    pub body: Expr,
    pub span: Span,
}
