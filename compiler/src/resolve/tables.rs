//! The resolver's own tables: resolved types, declarations per unit, and the
//! signatures of actions, functions and operations.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use crate::ast;
use crate::intern::{Name, NameHasher};
use crate::ir::{ActionId, EntityId, EventId, FailureId, OpId, Owner, PkgId};
use crate::span::{FileId, Span};

pub(crate) use crate::ir::types::{Bounds, FieldDef, FnId, Prim, Ty, TypeDef, TypeId, TypeKind};

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
    pub binding: Option<String>,
    pub default: Option<String>,
    pub span: Span,
}

/// Names the resolver looks for, interned once: comparing ids spares
/// reading the text of every setting key of a large app.
pub(crate) struct Words {
    pub action: Name,
    pub input: Name,
    pub event: Name,
    pub path: Name,
    pub kind: Name,
    pub code: Name,
    pub store: Name,
}

pub(crate) fn words() -> &'static Words {
    static WORDS: OnceLock<Words> = OnceLock::new();
    WORDS.get_or_init(|| Words {
        action: Name::new("action"),
        input: Name::new("input"),
        event: Name::new("event"),
        path: Name::new("path"),
        kind: Name::new("kind"),
        code: Name::new("code"),
        store: Name::new("store"),
    })
}

/// A type name of the prelude.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Prelude {
    List,
    Prim(Prim),
}

/// The prelude type `name` names, if any.
pub(super) fn prelude_type(name: Name) -> Option<Prelude> {
    static NAMES: OnceLock<Vec<(Name, Prelude)>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        let prims = Prim::ALL.iter().map(|p| (p.as_str(), Prelude::Prim(*p)));
        let all = std::iter::once(("List", Prelude::List)).chain(prims);
        all.map(|(text, p)| (Name::new(text), p)).collect()
    });
    names.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// A table keyed by [`Name`]: lookups hash the name's id and never touch
/// its text. Iteration is always in text order (as a `BTreeMap` would give),
/// never in hash order, so candidates and messages are deterministic; the
/// order is computed once, on first use (an error path), and cached.
#[derive(Debug)]
pub(crate) struct NameMap<V> {
    map: HashMap<Name, V, NameHasher>,
    order: OnceLock<Vec<Name>>,
}

impl<V> Default for NameMap<V> {
    fn default() -> Self {
        NameMap {
            map: HashMap::default(),
            order: OnceLock::new(),
        }
    }
}

impl<V: Clone> Clone for NameMap<V> {
    fn clone(&self) -> Self {
        NameMap {
            map: self.map.clone(),
            order: self.order.clone(),
        }
    }
}

impl<V> NameMap<V> {
    pub fn get(&self, name: &Name) -> Option<&V> {
        self.map.get(name)
    }

    pub fn get_mut(&mut self, name: &Name) -> Option<&mut V> {
        self.map.get_mut(name)
    }

    pub fn contains_key(&self, name: &Name) -> bool {
        self.map.contains_key(name)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn reserve(&mut self, additional: usize) {
        self.map.reserve(additional);
    }

    pub fn insert(&mut self, name: Name, value: V) -> Option<V> {
        self.order = OnceLock::new();
        self.map.insert(name, value)
    }

    /// The names in text order.
    fn order(&self) -> &[Name] {
        self.order.get_or_init(|| {
            let mut names: Vec<Name> = self.map.keys().copied().collect();
            names.sort_unstable();
            names
        })
    }

    /// Entries in text order.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, &V)> {
        self.order()
            .iter()
            .filter_map(|n| self.map.get_key_value(n))
    }

    pub fn keys(&self) -> impl Iterator<Item = &Name> {
        self.iter().map(|(n, _)| n)
    }

    /// Values in no particular order: only where the order cannot show.
    pub fn values_unordered(&self) -> impl Iterator<Item = &V> {
        self.map.values()
    }

    /// Values to change in place, in no particular order (the names and
    /// their order stay).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.map.values_mut()
    }
}

impl<V> Extend<(Name, V)> for NameMap<V> {
    fn extend<I: IntoIterator<Item = (Name, V)>>(&mut self, entries: I) {
        self.order = OnceLock::new();
        self.map.extend(entries);
    }
}

impl<'m, V> IntoIterator for &'m NameMap<V> {
    type Item = (&'m Name, &'m V);
    type IntoIter = Box<dyn Iterator<Item = (&'m Name, &'m V)> + 'm>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// One scope unit: the standard library, a package, or the app.
#[derive(Clone, Debug)]
pub(crate) struct UnitInfo {
    pub owner: Owner,
    pub files: Vec<FileId>,
    pub decls: NameMap<(Decl, Span)>,
    pub callables: NameMap<(Callable, Span)>,
    pub stores: NameMap<Span>,
    pub config: NameMap<ConfigEntry>,
    pub ops: BTreeMap<String, OpId>,
    /// Packages this unit may name, by name.
    pub sees: NameMap<PkgId>,
    /// Packages the unit requires that could not be loaded (already
    /// reported): names under them resolve silently to errors.
    pub missing: NameMap<()>,
}

impl UnitInfo {
    pub fn new(owner: Owner) -> Self {
        UnitInfo {
            owner,
            files: Vec::new(),
            decls: NameMap::default(),
            callables: NameMap::default(),
            stores: NameMap::default(),
            config: NameMap::default(),
            ops: BTreeMap::new(),
            sees: NameMap::default(),
            missing: NameMap::default(),
        }
    }

    /// The unit's action names, for "did you mean" on an unknown action.
    pub fn action_names(&self) -> Vec<String> {
        self.callables
            .iter()
            .filter(|(_, (c, _))| matches!(c, Callable::Action(_)))
            .map(|(n, _)| n.as_str().to_string())
            .collect()
    }
}

/// An action's resolved header.
#[derive(Clone, Debug)]
pub(crate) struct ActionSig<'a> {
    pub unit: Owner,
    pub decl: Option<&'a ast::ActionDecl>,
    pub params: std::sync::Arc<[(Name, Ty, Span)]>,
    pub ret: Ty,
    /// Declared `fails` (resolved entries only).
    pub fails: std::sync::Arc<[FailureId]>,
    /// True when the `fails` clause had an unresolved entry: the action's
    /// failures are not judged, so nothing cascades from it.
    pub fails_unknown: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct FnSig<'a> {
    pub unit: Owner,
    /// `None` only in the tables of an edit resolved by moving the last
    /// resolution's results (`patch.rs`), which checks no function.
    pub decl: Option<&'a ast::FunctionDecl>,
    pub params: std::sync::Arc<[(Name, Ty, Span)]>,
    pub ret: Ty,
}

#[derive(Clone, Debug)]
pub(crate) struct OpSig {
    pub request: Ty,
    pub answer: Ty,
    /// The operation's failures other than `Unavailable`/`RateLimited`.
    pub failures: Vec<FailureId>,
}
