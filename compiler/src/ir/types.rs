//! Resolved types: primitives, declared (nominal) types, lists, optionals and
//! constraints. The resolver builds them; the checker sizes events with them
//! and the runtime validates and encodes values against them.

use std::sync::Arc;

use crate::intern::Name;
use crate::span::Span;

use super::Owner;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TypeId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FnId(pub u32);

crate::idx!(TypeId, FnId);

/// The prelude's primitive types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Prim {
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

    pub fn named(text: &str) -> Option<Prim> {
        Prim::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// Constraints written on a type: `{ max_length: 64 }`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bounds {
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
pub enum Ty {
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
    Bounded(Box<Ty>, Arc<Bounds>),
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

    /// The declared type this one names, inside any list, option or
    /// bounds: a type names at most one.
    pub fn declared(&self) -> Option<TypeId> {
        match self {
            Ty::Named(t) => Some(*t),
            Ty::List(inner) | Ty::Optional(inner) | Ty::Bounded(inner, _) => inner.declared(),
            Ty::Error | Ty::Prim(_) | Ty::NoneValue => None,
        }
    }

    /// [`Ty::declared`], to be moved to another id.
    pub fn declared_mut(&mut self) -> Option<&mut TypeId> {
        match self {
            Ty::Named(t) => Some(t),
            Ty::List(inner) | Ty::Optional(inner) | Ty::Bounded(inner, _) => inner.declared_mut(),
            Ty::Error | Ty::Prim(_) | Ty::NoneValue => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct FieldDef {
    pub name: Name,
    pub ty: Ty,
    pub optional: bool,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TypeKind {
    /// Not resolved yet (or its definition was an error).
    Pending,
    /// `type X = Text { ... }` or `type X = stripe.Email`.
    Alias(Ty),
    Enum(Vec<Name>),
    /// `Object { }`, an event's or an entity's fields.
    Record(Vec<FieldDef>),
}

#[derive(Clone, Debug)]
pub struct TypeDef {
    pub owner: Owner,
    pub name: Name,
    pub kind: TypeKind,
    /// The declaring name (`None` for synthetic types such as a route's
    /// path parameters).
    pub span: Option<Span>,
}

/// How far alias chains are followed; a longer chain is a cycle, which the
/// resolver reports.
const MAX_ALIAS_DEPTH: usize = 32;

/// Structural questions about types, answered over the program's type
/// table.
#[derive(Clone, Copy)]
pub struct Types<'t>(pub &'t [TypeDef]);

impl<'t> Types<'t> {
    pub fn def(self, t: TypeId) -> Option<&'t TypeDef> {
        self.0.get(t.0 as usize)
    }

    fn alias(self, t: TypeId) -> Option<&'t Ty> {
        match self.def(t).map(|d| &d.kind) {
            Some(TypeKind::Alias(inner)) => Some(inner),
            _ => None,
        }
    }

    /// The primitive a type is built on, looking through declared aliases.
    pub fn prim_of(self, ty: &Ty) -> Option<Prim> {
        match self.base_of(ty) {
            Ty::Prim(p) => Some(*p),
            _ => None,
        }
    }

    /// The structural base of a type: declared aliases and bounds removed.
    pub fn base_of(self, ty: &'t Ty) -> &'t Ty {
        let mut ty = ty.unbounded();
        for _ in 0..MAX_ALIAS_DEPTH {
            match ty {
                Ty::Named(t) => match self.alias(*t) {
                    Some(inner) => ty = inner.unbounded(),
                    None => return ty,
                },
                _ => return ty,
            }
        }
        ty
    }

    /// The fields of a record type (an object, an event, an entity).
    pub fn record(self, ty: &Ty) -> Option<(TypeId, &'t [FieldDef])> {
        let t = self.last_named(ty)?;
        match self.def(t).map(|d| &d.kind) {
            Some(TypeKind::Record(fields)) => Some((t, fields)),
            _ => None,
        }
    }

    /// The variants of an enum type.
    pub fn variants(self, ty: &Ty) -> Option<(TypeId, &'t [Name])> {
        let t = self.last_named(ty)?;
        match self.def(t).map(|d| &d.kind) {
            Some(TypeKind::Enum(v)) => Some((t, v)),
            _ => None,
        }
    }

    /// The declared type at the end of an alias chain (`type A = B`), when
    /// the chain ends in one.
    fn last_named(self, ty: &Ty) -> Option<TypeId> {
        let Ty::Named(mut t) = ty.unbounded() else {
            return None;
        };
        for _ in 0..MAX_ALIAS_DEPTH {
            match self.alias(t).map(Ty::unbounded) {
                Some(Ty::Named(next)) => t = *next,
                Some(_) => return None,
                None => return Some(t),
            }
        }
        None
    }

    /// Every set of bounds that applies to a value of this type, outermost
    /// first; walked lazily, as literals are checked against them often.
    pub fn bounds_of(self, ty: &'t Ty) -> impl Iterator<Item = &'t Bounds> + 't {
        let mut next = Some(ty);
        let mut steps = 0;
        std::iter::from_fn(move || {
            while let Some(ty) = next.take() {
                steps += 1;
                if steps > MAX_ALIAS_DEPTH {
                    return None;
                }
                match ty {
                    Ty::Bounded(inner, b) => {
                        next = Some(inner);
                        return Some(&**b);
                    }
                    Ty::Named(t) => next = self.alias(*t),
                    Ty::Optional(inner) => next = Some(inner),
                    _ => {}
                }
            }
            None
        })
    }

    /// How a type is written, with package types qualified by their
    /// package's name (`stripe.Email`), as a runtime message shows it.
    pub fn name(self, ty: &Ty, packages: &[super::Package]) -> String {
        match ty {
            Ty::Error => "?".to_string(),
            Ty::Prim(p) => p.as_str().to_string(),
            Ty::Named(t) => match self.def(*t) {
                Some(d) => match d.owner {
                    Owner::Package(p) => {
                        let pkg = packages.get(p.0 as usize).map_or("?", |p| p.name.as_str());
                        format!("{pkg}.{}", d.name)
                    }
                    _ => d.name.as_str().to_string(),
                },
                None => "?".to_string(),
            },
            Ty::List(inner) => format!("List<{}>", self.name(inner, packages)),
            Ty::Optional(inner) => format!("{}?", self.name(inner, packages)),
            Ty::NoneValue => "none".to_string(),
            Ty::Bounded(inner, _) => self.name(inner, packages),
        }
    }
}
