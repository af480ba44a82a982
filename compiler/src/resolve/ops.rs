//! Operations from each `package.yaml`, lowered to [`crate::ir::Operation`],
//! with their `request`/`answer` types and failure names checked against the
//! package's `.jadpo` declarations (spans point into the YAML).

use crate::diag::{nearest, Diagnostic};
use crate::intern::Name;
use crate::ir::{self, FailureId, Owner, PkgId};
use crate::manifest::OperationDecl;
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
        });
        self.op_sigs.push(OpSig {
            request,
            answer,
            failures: lasting,
        });
        self.unit_mut(unit).ops.insert(op.name.node.clone(), id);
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

    fn manifest_failure(&mut self, unit: Owner, name: &Spanned<String>) -> Option<FailureId> {
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
