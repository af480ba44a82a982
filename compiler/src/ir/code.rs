//! The typed, resolved code of action and function bodies: every statement
//! and expression, names replaced by ids and local slots. The runtime
//! interprets it; the checker reads the effect tree ([`super::Block`]) built
//! in the same pass, whose effects carry the same spans as the calls here.

use std::sync::Arc;

use crate::intern::Name;
use crate::span::Span;

use super::types::{FnId, Ty, TypeId};
use super::{ActionId, EntityId, EventId, FailureId, OpId};

/// A local variable's slot in its body's frame. Parameters take the first
/// slots, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Local(pub u32);

/// A body: its statements and how many local slots it uses.
#[derive(Clone, Debug, Default)]
pub struct Body {
    pub stmts: Vec<Stmt>,
    pub locals: u32,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `var x = e` and `x = e`: the value goes to the slot.
    Set(Local, Expr),
    If {
        cond: Expr,
        then_block: Vec<Stmt>,
        else_block: Vec<Stmt>,
    },
    /// `for item in items [max N]`: at most the first N items.
    For {
        item: Local,
        items: Expr,
        max: Option<u32>,
        body: Vec<Stmt>,
    },
    Return(Option<Expr>),
    Reject(Reject),
    Emit(Emit),
    /// An expression evaluated for its effect; the value is dropped.
    Expr(Expr),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// The node for code that could not be resolved (already reported); a
    /// program with errors is never run.
    pub fn error(span: Span) -> Expr {
        Expr {
            kind: ExprKind::Error,
            span,
        }
    }
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

#[derive(Clone, Debug)]
pub enum ExprKind {
    Unit,
    Bool(bool),
    Int(i64),
    /// A decimal literal as written (`12.50`), exact.
    Decimal(Arc<str>),
    Text(Arc<str>),
    /// Whole milliseconds.
    Duration(i64),
    None,
    Local(Local),
    /// `config.name`
    Config(Name),
    /// `clock.now`
    ClockNow,
    /// `Tier.basic`
    Variant(TypeId, Name),
    /// `e.a.b`: fields read in turn (kept flat: a long dotted path is one
    /// node, not a deep chain).
    Field(Box<Expr>, Vec<Name>),
    /// `Type { field: value }`: fields in the order written.
    Construct {
        ty: TypeId,
        fields: Vec<(Name, Expr)>,
    },
    List(Vec<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A pure function's call.
    Function(FnId, Vec<Expr>),
    /// `Text(e)`: any Int, Decimal, Bool, Uuid, Instant or Duration as text.
    TextOf(Box<Expr>),
    /// `T(e)`: the value checked against `ty`'s constraints; fails with
    /// `InvalidValue` when it breaks them. `literal` when checked when
    /// compiling (it cannot fail).
    Validate {
        ty: Ty,
        value: Box<Expr>,
        literal: bool,
    },
    /// A store read that cannot fail: `query optional` or `query many`.
    Query(Box<Query>),
    /// `stored E`, `sent pkg.op`, `emitted Ev`, in tests.
    Count(Count),
    /// Something that can fail: an outside call, an action call, a write,
    /// `query required` or a validated construction; under `attempt`,
    /// `match`, or (in code with errors) neither.
    Fallible(Box<Fallible>),
    /// `attempt e`: e's failures pass on.
    Attempt(Box<Expr>),
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<Arm>,
    },
    /// `{ statements }` as a match arm's body: yields `Unit`.
    Block(Vec<Stmt>),
    /// `reject F` as a match arm's body.
    Reject(Reject),
    /// `propagate` as a match arm's body.
    Propagate,
    Error,
}

#[derive(Clone, Debug)]
pub enum Fallible {
    /// `pkg.op.path(request)`; `site` is the callee's span, as in the
    /// effect tree and the plan.
    Op {
        op: OpId,
        request: Expr,
        site: Span,
    },
    /// An app or package action run inside the caller's delivery.
    Action {
        action: ActionId,
        args: Vec<Expr>,
        site: Span,
    },
    Write(Write),
    /// `query required E { ... missing: F }`
    Query(Query),
    /// `T(e)` of a computed value.
    Validate {
        ty: Ty,
        value: Expr,
    },
}

#[derive(Clone, Debug)]
pub enum Write {
    Create {
        entity: EntityId,
        fields: Vec<(Name, Expr)>,
        conflict: Option<FailureId>,
    },
    Update {
        entity: EntityId,
        filter: Vec<(Name, Expr)>,
        set: Vec<(Name, Expr)>,
        missing: Option<FailureId>,
        conflict: Option<FailureId>,
    },
    Delete {
        entity: EntityId,
        filter: Vec<(Name, Expr)>,
        missing: Option<FailureId>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryMode {
    Optional,
    Required,
    Many,
}

/// `query optional | required | many E { where: ... missing: F limit: N }`
#[derive(Clone, Debug)]
pub struct Query {
    pub mode: QueryMode,
    pub entity: EntityId,
    /// `field == value` conditions joined by `and`.
    pub filter: Vec<(Name, Expr)>,
    pub missing: Option<FailureId>,
    pub limit: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Arm {
    pub pattern: ArmPattern,
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArmPattern {
    /// `success(v)`: the value goes to the slot.
    Success(Local),
    Failure(FailureId),
}

/// `reject F { field: value }`
#[derive(Clone, Debug)]
pub struct Reject {
    pub failure: FailureId,
    pub fields: Vec<(Name, Expr)>,
    pub span: Span,
}

/// `emit Event { fields } with { options }`
#[derive(Clone, Debug)]
pub struct Emit {
    pub event: EventId,
    pub fields: Vec<(Name, Expr)>,
    pub options: Vec<(Name, OptionCode)>,
    pub span: Span,
}

/// An emit option's value: an expression, or a record of them (`unique`).
#[derive(Clone, Debug)]
pub enum OptionCode {
    Expr(Expr),
    Record(Vec<(Name, OptionCode)>),
}

/// A pure function.
#[derive(Clone, Debug)]
pub struct Function {
    pub name: Name,
    pub params: Vec<(Name, Ty)>,
    pub ret: Ty,
    pub span: Span,
    pub code: Body,
    pub reads: super::Reads,
}

/// What a count counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// `stored E`: committed rows.
    Stored(EntityId),
    /// `sent pkg.op`: the fake's effects of a changing operation.
    Sent(OpId),
    /// `emitted Ev`: events inserted into the outbox.
    Emitted(EventId),
}
