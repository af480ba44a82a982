//! Name lookup with visibility (design section 1), "did you mean" candidates,
//! and how names and types are shown to the author of a given unit.

use crate::ast::{Ident, Path};
use crate::diag::{nearest, Diagnostic};
use crate::ir::{FailureId, Owner, PkgId};
use crate::span::Span;

use super::tables::{Decl, Ty, TypeKind};
use super::{Resolver, Tables};

/// The outcome of looking a dotted name up.
pub(crate) enum Found<T> {
    Yes(T),
    /// Under a package that could not be loaded (already reported).
    Silent,
    /// `pkg.X` where `pkg` is not a package this unit may name.
    UnknownPackage(Ident),
    No,
}

impl<'a> Tables<'a> {
    /// How a declaration owned by `owner` is written from `viewer`.
    pub fn qualify(&self, owner: Owner, name: &str, viewer: Owner) -> String {
        match owner {
            Owner::Package(p) if owner != viewer => format!("{}.{}", self.pkg_name(p), name),
            _ => name.to_string(),
        }
    }

    pub fn pkg_name(&self, p: PkgId) -> &'static str {
        self.prog
            .packages
            .get(p)
            .map_or("?", |pkg| pkg.name.as_str())
    }

    pub fn failure_name(&self, id: FailureId, viewer: Owner) -> String {
        let f = self.prog.failure(id);
        let plain = f.qualified.rsplit('.').next().unwrap_or(&f.qualified);
        self.qualify(f.owner, plain, viewer)
    }

    pub fn type_name(&self, ty: &Ty, viewer: Owner) -> String {
        match ty {
            Ty::Error => "?".to_string(),
            Ty::Prim(p) => p.as_str().to_string(),
            Ty::Named(t) => {
                let def = &self.types[*t];
                self.qualify(def.owner, def.name.as_str(), viewer)
            }
            Ty::List(inner) => format!("List<{}>", self.type_name(inner, viewer)),
            Ty::Optional(inner) => format!("{}?", self.type_name(inner, viewer)),
            Ty::NoneValue => "none".to_string(),
            Ty::Bounded(inner, _) => self.type_name(inner, viewer),
        }
    }

    /// Looks up an UpperCamelCase declaration: `X` in the unit or the
    /// stdlib, `pkg.X` in a package the unit may name.
    pub fn lookup_decl(&self, unit: Owner, path: &Path) -> Found<Decl> {
        match path.segments.as_slice() {
            [one] => {
                let own = self.unit(unit).decls.get(&one.name);
                let found = own.or_else(|| self.unit(Owner::Stdlib).decls.get(&one.name));
                match found {
                    Some((d, _)) => Found::Yes(*d),
                    None => Found::No,
                }
            }
            [pkg, item] => match self.package_seen(unit, pkg) {
                Found::Yes(p) => match self.unit(Owner::Package(p)).decls.get(&item.name) {
                    Some((d, _)) => Found::Yes(*d),
                    None => Found::No,
                },
                Found::Silent => Found::Silent,
                Found::UnknownPackage(i) => Found::UnknownPackage(i),
                Found::No => Found::No,
            },
            _ => Found::No,
        }
    }

    /// The package a unit names as `pkg`.
    pub fn package_seen(&self, unit: Owner, pkg: &Ident) -> Found<PkgId> {
        let u = self.unit(unit);
        if let Some(p) = u.sees.get(&pkg.name) {
            return Found::Yes(*p);
        }
        if u.missing.contains_key(&pkg.name) {
            return Found::Silent;
        }
        Found::UnknownPackage(*pkg)
    }

    /// Every declaration name a unit can write, filtered by kind, as written.
    pub fn decl_candidates(&self, unit: Owner, keep: impl Fn(Decl) -> bool) -> Vec<String> {
        let mut out = Vec::new();
        let own = self.unit(unit);
        for (name, (d, _)) in &own.decls {
            if keep(*d) {
                out.push(name.as_str().to_string());
            }
        }
        if unit != Owner::Stdlib {
            for (name, (d, _)) in &self.unit(Owner::Stdlib).decls {
                if keep(*d) {
                    out.push(name.as_str().to_string());
                }
            }
        }
        for (pname, p) in &own.sees {
            if Owner::Package(*p) == unit {
                continue;
            }
            for (name, (d, _)) in &self.unit(Owner::Package(*p)).decls {
                if keep(*d) {
                    out.push(format!("{pname}.{name}"));
                }
            }
        }
        out
    }
}

impl Resolver<'_, '_> {
    /// Reports an unknown name, suggesting the nearest candidate.
    pub fn report_unknown(
        &mut self,
        code: &'static str,
        what: &str,
        span: Span,
        written: &str,
        candidates: &[String],
    ) {
        let d = self.unknown_diag(code, what, span, written, candidates);
        self.error(d);
    }

    /// [`Self::report_unknown`] with the suggestion already found.
    pub fn report_unknown_near(
        &mut self,
        code: &'static str,
        what: &str,
        span: Span,
        written: &str,
        near: Option<String>,
    ) {
        let d = Diagnostic::error(code, span, format!("unknown {what} `{written}`"))
            .with_label(format!("no {what} named `{written}` is visible here"));
        let d = match near {
            Some(near) => d.with_did_you_mean(span, &near),
            None => d.with_fix(format!("declare the {what}, or correct its name")),
        };
        self.error(d);
    }

    /// The nearest of the names `names` gives for `written`, through the
    /// shared memo: each list is built once per unit and kind, and each
    /// written name answered once.
    pub fn suggestion(
        &self,
        code: &'static str,
        unit: Owner,
        written: &str,
        names: impl FnOnce(&Tables<'_>) -> Vec<String>,
    ) -> Option<String> {
        let size: usize = self
            .units
            .iter()
            .map(|u| u.decls.len() + u.callables.len() + u.ops.len())
            .sum();
        let t: &Tables<'_> = self;
        self.suggest_memo
            .suggest((code, unit, size), written, || names(t))
    }

    /// The diagnostic of [`Self::report_unknown`], for a caller that adds to it.
    pub fn unknown_diag(
        &self,
        code: &'static str,
        what: &str,
        span: Span,
        written: &str,
        candidates: &[String],
    ) -> Diagnostic {
        let d = Diagnostic::error(code, span, format!("unknown {what} `{written}`"))
            .with_label(format!("no {what} named `{written}` is visible here"));
        with_suggestion(d, what, span, written, candidates)
    }

    /// `record.field` where the record (`owner`, declared at `declared`)
    /// has no such field: the nearest field's name when one is near, else,
    /// for a record of a few fields, all of them; with a label at the
    /// record's declaration.
    pub fn report_unknown_field(
        &mut self,
        (owner, declared): (&str, Option<Span>),
        span: Span,
        written: &str,
        candidates: &[String],
    ) {
        let mut d = Diagnostic::error(
            "name.unknown_field",
            span,
            format!("`{owner}` has no field `{written}`"),
        )
        .with_label(format!("not a field of `{owner}`"));
        if let Some(declared) = declared {
            d = d.with_related(declared, format!("`{owner}` is declared here"));
        }
        if suggest(written, candidates).is_none() && (1..=MAX_LISTED).contains(&candidates.len()) {
            let listed: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
            d = d.with_fix(format!("use one of its fields: {}", listed.join(", ")));
            self.error(d);
            return;
        }
        self.push_with_suggestion(d, "field", span, written, candidates);
    }

    /// Where a named type is declared (`None` for a built-in or a
    /// synthetic one).
    pub fn declared_at(&self, ty: &Ty) -> Option<Span> {
        match ty {
            Ty::Named(t) => self.types.get(*t).and_then(|d| d.span),
            _ => None,
        }
    }

    fn push_with_suggestion(
        &mut self,
        d: Diagnostic,
        what: &str,
        span: Span,
        written: &str,
        candidates: &[String],
    ) {
        let d = with_suggestion(d, what, span, written, candidates);
        self.error(d);
    }

    /// Reports `pkg.X` where `pkg` is not a package this unit may name.
    pub fn report_unknown_package(&mut self, unit: Owner, pkg: Ident) {
        let sees = self.unit(unit).sees.keys();
        let mut names: Vec<String> = sees.map(|n| n.as_str().to_string()).collect();
        names.sort();
        let written = pkg.name.as_str();
        let mut d = Diagnostic::error(
            "name.unknown_package",
            pkg.span,
            format!("unknown package `{written}`"),
        )
        .with_label("not a package this code may use");
        d = match unit {
            Owner::App => d.with_reason("an app sees the packages listed under `packages:` in jadpo.yaml and the standard library"),
            _ => d.with_reason("a package sees itself, the standard library and the packages its package.yaml requires; it cannot see the app"),
        };
        match nearest(written, names.iter().map(String::as_str)) {
            Some(near) => d = d.with_did_you_mean(pkg.span, near),
            None => d = d.with_fix(format!("add `{written}` under `packages:`")),
        }
        self.error(d);
    }

    /// Resolves a failure name; reports and returns `None` when it is not one.
    pub fn find_failure(&mut self, unit: Owner, path: &Path) -> Option<FailureId> {
        let want = Wanted {
            take: |d| match d {
                Decl::Failure(f) => Some(f),
                _ => None,
            },
            code: "name.unknown_failure",
            word: "failure",
            article: "a failure",
        };
        self.find_kind(unit, path, want)
    }

    /// Resolves a name that must be an event.
    pub fn find_event(
        &mut self,
        unit: Owner,
        path: &Path,
    ) -> Option<(crate::ir::EventId, super::tables::TypeId)> {
        let want = Wanted {
            take: |d| match d {
                Decl::Event(e, t) => Some((e, t)),
                _ => None,
            },
            code: "name.unknown_event",
            word: "event",
            article: "an event",
        };
        self.find_kind(unit, path, want)
    }

    /// Resolves a name that must be an entity.
    pub fn find_entity(
        &mut self,
        unit: Owner,
        path: &Path,
    ) -> Option<(crate::ir::EntityId, super::tables::TypeId)> {
        let want = Wanted {
            take: |d| match d {
                Decl::Entity(e, t) => Some((e, t)),
                _ => None,
            },
            code: "name.unknown_entity",
            word: "entity",
            article: "an entity",
        };
        self.find_kind(unit, path, want)
    }

    /// Resolves a name that must be of the kind `want` takes; reports an
    /// unknown name, a name of another kind or an unknown package.
    fn find_kind<T>(&mut self, unit: Owner, path: &Path, want: Wanted<T>) -> Option<T> {
        match self.lookup_decl(unit, path) {
            Found::Yes(decl) => {
                let taken = (want.take)(decl);
                if taken.is_none() {
                    self.report_wrong_kind(path, decl, want.article);
                }
                taken
            }
            Found::Silent => None,
            Found::UnknownPackage(p) => {
                self.report_unknown_package(unit, p);
                None
            }
            Found::No => {
                let text = path.text();
                let near = self.suggestion(want.code, unit, &text, |t| {
                    t.decl_candidates(unit, |d| (want.take)(d).is_some())
                });
                self.report_unknown_near(want.code, want.word, path.span, &text, near);
                None
            }
        }
    }

    pub fn report_wrong_kind(&mut self, path: &Path, found: Decl, wanted: &str) {
        let d = Diagnostic::error(
            "name.wrong_kind",
            path.span,
            format!("`{}` is {}, not {wanted}", path.text(), found.what()),
        )
        .with_label(format!("expected {wanted} here"))
        .with_fix(format!("name {wanted} here"));
        self.error(d);
    }

    /// Fields of a record type, looking through aliases.
    pub fn record_fields(
        &self,
        ty: &Ty,
    ) -> Option<(super::tables::TypeId, &[super::tables::FieldDef])> {
        let mut ty = ty.unbounded();
        for _ in 0..32 {
            match ty {
                Ty::Named(t) => match &self.types[*t].kind {
                    TypeKind::Record(fields) => return Some((*t, fields.as_slice())),
                    TypeKind::Alias(inner) => ty = inner.unbounded(),
                    _ => return None,
                },
                Ty::Optional(inner) => ty = inner.unbounded(),
                _ => return None,
            }
        }
        None
    }
}

/// The nearest candidate: by edit distance, or one swap of two neighbouring
/// characters away (`cdoe` for `code`).
pub(crate) fn suggest<'c>(written: &str, candidates: &'c [String]) -> Option<&'c str> {
    if let Some(near) = nearest(written, candidates.iter().map(String::as_str)) {
        return Some(near);
    }
    let w: Vec<char> = written.chars().collect();
    candidates
        .iter()
        .map(String::as_str)
        .find(|c| super::suggest::swapped(&w, c))
}

/// The kind of declaration a `find_*` lookup expects, and its words for
/// diagnostics.
struct Wanted<T> {
    take: fn(Decl) -> Option<T>,
    code: &'static str,
    word: &'static str,
    article: &'static str,
}

/// Adds "did you mean" (an edit) or the generic fix to an unknown-name
/// diagnostic.
/// A record with at most this many fields has them all listed when a
/// field name is unknown and none is near.
const MAX_LISTED: usize = 8;

fn with_suggestion(
    d: Diagnostic,
    what: &str,
    span: Span,
    written: &str,
    candidates: &[String],
) -> Diagnostic {
    match suggest(written, candidates) {
        Some(near) => d.with_did_you_mean(span, near),
        None => d.with_fix(format!("declare the {what}, or correct its name")),
    }
}
