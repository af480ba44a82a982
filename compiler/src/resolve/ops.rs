//! Operations from each `package.yaml`, lowered to [`crate::ir::Operation`],
//! with their `request`/`answer` types and failure names checked against the
//! package's `.jadpo` declarations (spans point into the YAML).

use crate::diag::{nearest, Diagnostic};
use crate::http::PathPart;
use crate::intern::Name;
use crate::ir::types::Types;
use crate::ir::HttpOperation;
use crate::ir::{self, FailureId, Owner, PkgId};
use crate::manifest::{HttpOperationDecl, OperationDecl};
use crate::span::Spanned;

use super::tables::{Decl, OpSig, Prim, Ty};
use super::{Builder, Resolver};

impl<'a> Builder<'a> {
    pub(super) fn lower_operations(&mut self) {
        let packages: Vec<_> = self.loaded_packages().collect();
        for (i, pkg) in packages.into_iter().enumerate() {
            let p = PkgId(i as u32);
            for op in &pkg.manifest.operations {
                self.lower_operation(p, op);
            }
        }
    }

    fn lower_operation(&mut self, p: PkgId, op: &OperationDecl) {
        let unit = Owner::Package(p);
        let request = self.rx().manifest_type(unit, &op.request);
        let answer = match &op.answer {
            Some(a) => self.rx().manifest_type(unit, a),
            None => Ty::unit(),
        };
        let failures = self.rx().manifest_failures(unit, &op.failures);
        let mut already_undone = Vec::new();
        for name in &op.already_undone {
            let Some(f) = self.rx().manifest_failure(unit, name) else {
                continue;
            };
            // A name missing from `failures:` was reported with the manifest.
            if failures.contains(&f) {
                already_undone.push(f);
            }
        }
        let lasting: Vec<FailureId> = failures
            .iter()
            .copied()
            .filter(|f| {
                let f = self.prog.failure(*f);
                !(f.owner == Owner::Stdlib && f.kind.is_transient())
            })
            .collect();
        let pkg = self.prog.package(p).clone();
        let http = op
            .http
            .as_ref()
            .map(|h| self.lower_http(unit, op, h, (&request, &answer), &failures));
        let id = ir::OpId(self.prog.operations.len() as u32);
        self.prog.operations.push(ir::Operation {
            package: p,
            name: op.name.node.clone(),
            qualified: format!("{}.{}", pkg.name, op.name.node),
            span: op.name.span,
            changes: op.changes,
            idempotent: op.idempotent,
            keyed: op.idempotent && op.keyed,
            failures,
            already_undone,
            large_output: op.large_output,
            timeout_ms: op.timeout_ms.unwrap_or(pkg.timeout_ms),
            attempts: op.attempts.unwrap_or(pkg.attempts),
            window_ms: pkg
                .idempotency
                .as_ref()
                .filter(|_| op.idempotent && op.keyed)
                .map(|i| op.window_ms.as_ref().map_or(i.window_ms, |w| w.node)),
            check: op.check.as_ref().map(|c| c.node.clone()),
            request: request.clone(),
            answer: answer.clone(),
            http,
        });
        self.op_sigs.push(OpSig {
            request,
            answer,
            failures: lasting,
        });
        self.unit_mut(unit).ops.insert(op.name.node.clone(), id);
    }
}

impl<'a> Builder<'a> {
    /// An operation's `http:`, its failures by id and each `{field}` of its
    /// path checked to be a required scalar field of the request.
    fn lower_http(
        &mut self,
        unit: Owner,
        op: &OperationDecl,
        h: &HttpOperationDecl,
        (request, answer): (&Ty, &Ty),
        failures: &[FailureId],
    ) -> HttpOperation {
        let mut by_failure = Vec::new();
        for (name, statuses) in &h.failures {
            if let Some(f) = self.rx().manifest_failure(unit, name) {
                if failures.contains(&f) {
                    by_failure.push((f, statuses.clone()));
                }
            }
        }
        for part in &h.path {
            if let PathPart::Field(field) = part {
                if let Some(why) = self.path_field_problem(request, field) {
                    self.report_path_field(op, h, field, &why);
                }
            }
        }
        for (f, ty, what) in [
            (&h.body_field, request, "request"),
            (&h.answer_field, answer, "answer"),
        ] {
            if let Some(f) = f {
                self.check_whole_field(op, f, ty, what);
            }
        }
        HttpOperation {
            body_field: h.body_field.as_ref().map(|f| f.node.clone()),
            answer_field: h.answer_field.as_ref().map(|f| f.node.clone()),
            method: h.method,
            path: h.path.clone(),
            encoding: h.encoding,
            rename: h
                .rename
                .iter()
                .map(|(f, w)| (f.node.clone(), w.clone()))
                .collect(),
            failures: by_failure,
        }
    }

    /// Why `{field}` cannot fill a path: the request has no such field, it
    /// may be absent, or it is not a single value.
    fn path_field_problem(&self, request: &Ty, field: &str) -> Option<String> {
        if matches!(request, Ty::Error) {
            return None;
        }
        let types = Types(&self.t.types);
        let Some((_, fields)) = types.record(request) else {
            return Some("the request is not a record, so it has no fields".into());
        };
        let Some(def) = fields.iter().find(|f| f.name.as_str() == field) else {
            let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            return Some(format!(
                "the request has no field `{field}` (its fields: {})",
                names.join(", ")
            ));
        };
        if def.optional || matches!(def.ty.unbounded(), Ty::Optional(_)) {
            return Some(format!(
                "`{field}` may be absent, and a path cannot leave a gap"
            ));
        }
        let scalar = types.prim_of(&def.ty).is_some() || types.variants(&def.ty).is_some();
        if !scalar {
            return Some(format!(
                "`{field}` is not a single value (text, number, enum)"
            ));
        }
        None
    }

    /// `body_field` / `answer_field`: a field of the request or answer
    /// record; for the answer, the only required one (the body fills it
    /// alone).
    fn check_whole_field(&mut self, op: &OperationDecl, f: &Spanned<String>, ty: &Ty, what: &str) {
        if matches!(ty, Ty::Error) {
            return;
        }
        let types = Types(&self.t.types);
        let why = match types.record(ty) {
            None => Some(format!("the {what} is not a record")),
            Some((_, fields)) => match fields.iter().find(|d| d.name.as_str() == f.node) {
                None => Some(format!("the {what} has no field `{}`", f.node)),
                Some(_) if what == "answer" => fields
                    .iter()
                    .find(|d| d.name.as_str() != f.node && !d.optional)
                    .map(|d| {
                        format!(
                            "the answer's field `{}` is required, and the body fills only `{}`",
                            d.name, f.node
                        )
                    }),
                Some(_) => None,
            },
        };
        let Some(why) = why else { return };
        self.rx().error(
            Diagnostic::error(
                "package.http_body_field",
                f.span,
                format!("`{}` cannot be the whole {what} body of `{}`", f.node, op.name.node),
            )
            .with_label(why)
            .with_reason("a provider that sends or answers a bare list is bound to one field of the record that holds it")
            .with_fix(format!("name a field of the {what} type, or drop the setting")),
        );
    }

    fn report_path_field(
        &mut self,
        op: &OperationDecl,
        h: &HttpOperationDecl,
        field: &str,
        why: &str,
    ) {
        self.rx().error(
            Diagnostic::error(
                "package.http_path_field",
                h.path_span,
                format!("the path of `{}` uses `{{{field}}}`, which cannot fill it", op.name.node),
            )
            .with_label(why.to_string())
            .with_reason("each `{field}` of a path is filled from a required top-level field of the request that holds one value")
            .with_fix("name a required text or number field of the request, or send the value in the body"),
        );
    }
}

impl<'a> Resolver<'_, 'a> {
    fn manifest_type(&mut self, unit: Owner, name: &Spanned<String>) -> Ty {
        if let Some(p) = Prim::named(&name.node) {
            return Ty::Prim(p);
        }
        match self.unit(unit).decls.get(&Name::new(&name.node)) {
            Some((d, _)) if d.as_type().is_some() => d.as_type().map_or(Ty::Error, Ty::Named),
            _ => {
                let cands = self.own_names(unit, |d| d.as_type().is_some());
                self.report_manifest_name("package.unknown_type", "type", name, &cands);
                Ty::Error
            }
        }
    }

    fn manifest_failures(&mut self, unit: Owner, names: &[Spanned<String>]) -> Vec<FailureId> {
        let mut out = Vec::new();
        for n in names {
            if let Some(f) = self.manifest_failure(unit, n) {
                if !out.contains(&f) {
                    out.push(f);
                }
            }
        }
        out
    }

    pub(super) fn manifest_failure(
        &mut self,
        unit: Owner,
        name: &Spanned<String>,
    ) -> Option<FailureId> {
        let key = Name::new(&name.node);
        let own = self.unit(unit).decls.get(&key);
        let std = self.unit(Owner::Stdlib).decls.get(&key);
        match own.or(std) {
            Some((Decl::Failure(f), _)) => Some(*f),
            _ => {
                let cands = self.own_names(unit, |d| matches!(d, Decl::Failure(_)));
                self.report_manifest_name("package.unknown_failure", "failure", name, &cands);
                None
            }
        }
    }

    fn own_names(&self, unit: Owner, keep: impl Fn(Decl) -> bool) -> Vec<String> {
        self.unit(unit)
            .decls
            .iter()
            .filter(|(_, (d, _))| keep(*d))
            .map(|(n, _)| n.as_str().to_string())
            .collect()
    }

    fn report_manifest_name(
        &mut self,
        code: &'static str,
        what: &str,
        name: &Spanned<String>,
        cands: &[String],
    ) {
        let mut d = Diagnostic::error(
            code,
            name.span,
            format!(
                "package.yaml names {what} `{}`, which the package does not declare",
                name.node
            ),
        )
        .with_label(format!(
            "no {what} `{}` in this package's .jadpo files",
            name.node
        ))
        .with_reason(format!(
            "an operation's {what}s must be declared in the package's own sources"
        ));
        match nearest(&name.node, cands.iter().map(String::as_str)) {
            Some(near) => d = d.with_did_you_mean(name.span, near),
            None => {
                d = d.with_fix(format!(
                    "declare `{}` in one of the package's .jadpo files",
                    name.node
                ))
            }
        }
        self.error(d);
    }
}
