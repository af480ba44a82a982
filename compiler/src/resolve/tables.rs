//! The resolver's own tables: resolved types, declarations per unit, and the
//! signatures of actions, functions and operations.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use crate::ast;
use crate::intern::Name;
use crate::ir::{ActionId, EntityId, EventId, FailureId, OpId, Owner, PkgId};
use crate::span::{FileId, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct TypeId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct FnId(pub u32);

/// The prelude's primitive types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Prim {
    Bool,
    Int,
    Decimal,
    Text,
    Uuid,
    Instant,
    Duration,
    Unit,
}

impl Prim {
    pub const ALL: [Prim; 8] = [
        Prim::Bool,
        Prim::Int,
        Prim::Decimal,
        Prim::Text,
        Prim::Uuid,
        Prim::Instant,
        Prim::Duration,
        Prim::Unit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Prim::Bool => "Bool",
            Prim::Int => "Int",
            Prim::Decimal => "Decimal",
            Prim::Text => "Text",
            Prim::Uuid => "Uuid",
            Prim::Instant => "Instant",
            Prim::Duration => "Duration",
            Prim::Unit => "Unit",
        }
    }

    pub fn from_str(text: &str) -> Option<Prim> {
        Prim::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// Constraints written on a type: `{ max_length: 64 }`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Bounds {
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<String>,
    pub email: bool,
}

/// A resolved type. `Error` stands for a type that could not be resolved
/// (already reported): it is accepted everywhere so no error derives from it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ty {
    Error,
    Prim(Prim),
    /// A declared type (alias, enum, object, event or entity): nominal.
    Named(TypeId),
    List(Box<Ty>),
    Optional(Box<Ty>),
    /// The type of the literal `none`.
    NoneValue,
    /// An inline constrained type such as a field's `Text { max_length: 64 }`:
    /// structural, it accepts what its inner type accepts.
    Bounded(Box<Ty>, Rc<Bounds>),
}

impl Ty {
    pub fn unit() -> Ty {
        Ty::Prim(Prim::Unit)
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Ty::Error)
    }

    /// The type without inline bounds.
    pub fn unbounded(&self) -> &Ty {
        match self {
            Ty::Bounded(inner, _) => inner.unbounded(),
            other => other,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct FieldDef {
    pub name: Name,
    pub ty: Ty,
    pub optional: bool,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub(crate) enum TypeKind {
    /// Not resolved yet (or its definition was an error).
    Pending,
    /// `type X = Text { ... }` or `type X = stripe.Email`.
    Alias(Ty),
    Enum(Vec<Name>),
    /// `Object { }`, an event's or an entity's fields.
    Record(Vec<FieldDef>),
}

#[derive(Clone, Debug)]
pub(crate) struct TypeDef {
    pub owner: Owner,
    pub name: Name,
    pub kind: TypeKind,
}

/// What an UpperCamelCase name declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decl {
    Type(TypeId),
    Event(EventId, TypeId),
    Entity(EntityId, TypeId),
    Failure(FailureId),
}

impl Decl {
    pub fn what(self) -> &'static str {
        match self {
            Decl::Type(_) => "a type",
            Decl::Event(..) => "an event",
            Decl::Entity(..) => "an entity",
            Decl::Failure(_) => "a failure",
        }
    }

    /// The type a name denotes when used as a type.
    pub fn as_type(self) -> Option<TypeId> {
        match self {
            Decl::Type(t) | Decl::Event(_, t) | Decl::Entity(_, t) => Some(t),
            Decl::Failure(_) => None,
        }
    }
}

/// What a lower_snake_case callable name declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Callable {
    Action(ActionId),
    Function(FnId),
}

#[derive(Clone, Debug)]
pub(crate) struct ConfigEntry {
    pub ty: Ty,
    pub secret: bool,
    pub span: Span,
}

/// One scope unit: the standard library, a package, or the app.
#[derive(Clone, Debug)]
pub(crate) struct UnitInfo {
    pub owner: Owner,
    pub files: Vec<FileId>,
    pub decls: BTreeMap<Name, (Decl, Span)>,
    pub callables: BTreeMap<Name, (Callable, Span)>,
    pub stores: BTreeMap<Name, Span>,
    pub config: BTreeMap<Name, ConfigEntry>,
    pub ops: BTreeMap<String, OpId>,
    /// Packages this unit may name, by name.
    pub sees: BTreeMap<String, PkgId>,
    /// Packages the unit requires that could not be loaded (already
    /// reported): names under them resolve silently to errors.
    pub missing: BTreeSet<String>,
}

impl UnitInfo {
    pub fn new(owner: Owner) -> Self {
        UnitInfo {
            owner,
            files: Vec::new(),
            decls: BTreeMap::new(),
            callables: BTreeMap::new(),
            stores: BTreeMap::new(),
            config: BTreeMap::new(),
            ops: BTreeMap::new(),
            sees: BTreeMap::new(),
            missing: BTreeSet::new(),
        }
    }
}

/// An action's resolved header.
#[derive(Clone, Debug)]
pub(crate) struct ActionSig<'a> {
    pub unit: Owner,
    pub decl: Option<&'a ast::ActionDecl>,
    pub params: Vec<(Name, Ty, Span)>,
    pub ret: Ty,
    /// Declared `fails` (resolved entries only).
    pub fails: Vec<FailureId>,
    /// True when the `fails` clause had an unresolved entry: the action's
    /// failures are not judged, so nothing cascades from it.
    pub fails_unknown: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct FnSig<'a> {
    pub unit: Owner,
    pub decl: &'a ast::FunctionDecl,
    pub params: Vec<(Name, Ty, Span)>,
    pub ret: Ty,
}

#[derive(Clone, Debug)]
pub(crate) struct OpSig {
    pub request: Ty,
    pub answer: Ty,
}
