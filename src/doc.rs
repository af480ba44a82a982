//! `jadpo doc PKG`: what a package offers an app, read from the package as
//! `jadpo publish` checks it: the provider's idempotency facts, each
//! operation (request, answer, whether it changes, how it is sent, its
//! failures), the types, the failures, and the public actions with their
//! surfaces (changing calls, failures that can follow an effect, deadline
//! budget). Markdown with `--format markdown`, plain text otherwise.
//!
//! PKG is a folder holding `package.yaml`, a package the app at `--app`
//! (the current folder by default) requires, or a bundled package.

use crate::describe::{operation_facts, yes_no};
use jadpo_compiler::duration;
use jadpo_compiler::ir::{OpId, Owner, Program, Ty, TypeId, TypeKind};
use jadpo_compiler::load::{Bundled, FsLoader};
use serde_json::Value;
use std::path::Path;

/// Where a package was found.
enum Source {
    Folder(String),
    Bundled(String),
}

/// The documentation of `package` (see the module documentation), or why
/// there is none.
pub fn document(package: &str, app: &str, markdown: bool) -> Result<String, String> {
    let checked = match find(package, app)? {
        Source::Folder(dir) => crate::publish::check_package(&FsLoader, &dir, None),
        Source::Bundled(name) => {
            crate::publish::check_package(Bundled::builtin().packages, &name, None)
        }
    };
    let Some(program) = &checked.program else {
        let first = checked
            .diagnostics
            .first()
            .map_or(String::new(), |d| format!(": {}: {}", d.code, d.summary));
        return Err(format!("`{package}` cannot be read as a package{first}"));
    };
    let mut text = page(program, &checked.name, checked.surface.as_ref());
    let errors = checked.errors();
    if errors > 0 {
        text.push_str(&format!(
            "\n> This package has {} (`jadpo check` on its folder shows them); what it offers may be incomplete.\n",
            crate::render::plural(errors, "error")
        ));
    }
    Ok(if markdown {
        text
    } else {
        crate::render::plain_text(&text)
    })
}

fn find(package: &str, app: &str) -> Result<Source, String> {
    let as_folder = Path::new(package);
    if as_folder.join("package.yaml").is_file() {
        return Ok(Source::Folder(package.to_string()));
    }
    if let Some(dir) = required_by_app(package, app) {
        return Ok(dir);
    }
    if bundled(package) {
        return Ok(Source::Bundled(package.to_string()));
    }
    Err(format!(
        "no package `{package}`: not a folder holding package.yaml, not required by the app at `{app}`, and not bundled (bundled: {})",
        bundled_names().join(", ")
    ))
}

/// The folder of `package` as the app at `app` resolves it.
fn required_by_app(package: &str, app: &str) -> Option<Source> {
    let Ok(crate::locate::Project::App(dir)) = crate::locate::locate(app) else {
        return None;
    };
    let loaded = jadpo_compiler::load::load_project(&FsLoader, &dir).ok()?;
    let found = loaded
        .packages
        .iter()
        .find(|p| p.manifest.name.node == package)?;
    let manifest = &loaded.files.get(found.manifest_file).path;
    let folder = Path::new(manifest).parent()?.to_string_lossy().into_owned();
    if let Some(name) = folder.strip_prefix("<bundled>/") {
        return Some(Source::Bundled(name.to_string()));
    }
    let joined = if Path::new(&folder).is_absolute() {
        folder
    } else {
        Path::new(&dir).join(folder).to_string_lossy().into_owned()
    };
    Some(Source::Folder(joined))
}

fn bundled(name: &str) -> bool {
    let packages = Bundled::builtin().packages;
    !name.contains(['/', '\\']) && packages.read(&format!("{name}/package.yaml")).is_ok()
}

fn bundled_names() -> Vec<String> {
    let packages = Bundled::builtin().packages;
    let mut names: Vec<String> = packages
        .list("")
        .map(|entries| {
            entries
                .into_iter()
                .filter(|(_, dir)| *dir)
                .map(|(n, _)| n)
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The Markdown page of the package `name` in `program`.
fn page(program: &Program, name: &str, surface: Option<&Value>) -> String {
    let Some(pkg) = program.packages.find_id(|p| p.name.as_str() == name) else {
        return format!("# {name}\n\nThe package declares nothing.\n");
    };
    let mine = |owner: &Owner| matches!(owner, Owner::Package(p) if *p == pkg);
    let facts = &program.packages[pkg];
    let mut out = format!("# {name} {}\n\n", facts.version);
    out.push_str(&provider(facts));
    let ops: Vec<OpId> = (program.operations.ids())
        .filter(|id| program.op(*id).package == pkg)
        .collect();
    section(
        &mut out,
        "Operations",
        ops.iter().map(|id| operation(program, *id)),
    );
    let types = program
        .types
        .iter()
        .enumerate()
        .filter(|(_, t)| mine(&t.owner) && t.span.is_some())
        .map(|(i, _)| type_entry(program, TypeId(i as u32)));
    section(&mut out, "Types", types);
    let failures = program.failures.iter().filter(|f| mine(&f.owner)).map(|f| {
        format!(
            "- `{}`: {}, code `{}`",
            f.qualified,
            f.kind.as_str(),
            f.code
        )
    });
    let failures: Vec<String> = failures.collect();
    if !failures.is_empty() {
        out.push_str(&format!("## Failures\n\n{}\n\n", failures.join("\n")));
    }
    let actions = program
        .actions
        .iter()
        .filter(|a| mine(&a.owner) && a.public)
        .map(|a| action_entry(program, a, surface));
    section(&mut out, "Public actions", actions);
    out.trim_end().to_string() + "\n"
}

fn section(out: &mut String, title: &str, entries: impl Iterator<Item = String>) {
    let entries: Vec<String> = entries.collect();
    if !entries.is_empty() {
        out.push_str(&format!("## {title}\n\n{}\n\n", entries.join("\n\n")));
    }
}

fn provider(p: &jadpo_compiler::ir::Package) -> String {
    let calls = format!(
        "Calls time out after {} and are tried {} time{} by default.",
        duration::text(p.timeout_ms),
        p.attempts,
        if p.attempts == 1 { "" } else { "s" }
    );
    let http = p.http.as_ref().map_or(String::new(), |h| {
        let settings: Vec<String> = h
            .settings
            .iter()
            .map(|s| format!("`{}`{}", s.name, if s.secret { " (secret)" } else { "" }))
            .collect();
        format!(
            "It is called over HTTP at {}; the app gives {} in `providers:`.\n\n",
            h.base_url,
            if settings.is_empty() {
                "no settings".to_string()
            } else {
                settings.join(", ")
            }
        )
    });
    http + &match &p.idempotency {
        None => format!("The provider takes no idempotency keys. {calls}\n\n"),
        Some(i) => format!(
            "The provider takes idempotency keys in `{}` and keeps each for {}; a 5xx is replayed for its key: {}; a new key after an answer: {}. {calls}\n\n",
            i.header,
            duration::text(i.window_ms),
            yes_no(i.replays_failures),
            match i.new_key_on {
                jadpo_compiler::manifest::NewKeyOn::None => "never",
                jadpo_compiler::manifest::NewKeyOn::Answer => "on the provider's answer",
            }
        ),
    }
}

fn operation(program: &Program, id: OpId) -> String {
    let op = program.op(id);
    format!(
        "### `{}`\n\n- request: `{}`\n- answer: `{}`\n{}",
        op.qualified,
        program.type_name(&op.request),
        program.type_name(&op.answer),
        operation_facts(program, id)
    )
}

fn type_entry(program: &Program, id: TypeId) -> String {
    let name = program.type_name(&Ty::Named(id));
    let Some(def) = program.types.get(id) else {
        return format!("### `{name}`");
    };
    let body = match &def.kind {
        TypeKind::Record(fields) => fields
            .iter()
            .map(|f| {
                let (ty, optional) = match (&f.ty, f.optional) {
                    (Ty::Optional(inner), true) => (&**inner, " (optional)"),
                    (ty, true) => (ty, " (optional)"),
                    (ty, false) => (ty, ""),
                };
                format!(
                    "- `{}`: `{}`{optional}",
                    f.name.as_str(),
                    written(program, ty)
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        TypeKind::Enum(values) => {
            let values: Vec<String> = values.iter().map(|v| format!("`{}`", v.as_str())).collect();
            format!("One of {}.", values.join(", "))
        }
        TypeKind::Alias(ty) => format!("`{}`", written(program, ty)),
        TypeKind::Pending => "(not resolved)".to_string(),
    };
    format!("### `{name}`\n\n{body}")
}

/// A type as written, with its constraints (`Text { max_length: 254 }`).
fn written(program: &Program, ty: &Ty) -> String {
    match ty {
        Ty::Bounded(inner, b) => {
            let mut parts = Vec::new();
            let num = |v: f64| v.to_string();
            b.min.inspect(|v| parts.push(format!("min: {}", num(*v))));
            b.max.inspect(|v| parts.push(format!("max: {}", num(*v))));
            b.min_length
                .inspect(|v| parts.push(format!("min_length: {v}")));
            b.max_length
                .inspect(|v| parts.push(format!("max_length: {v}")));
            if let Some(p) = &b.pattern {
                parts.push(format!("pattern: {}", jadpo_compiler::printer::quote(p)));
            }
            if b.email {
                parts.push("format: email".to_string());
            }
            format!("{} {{ {} }}", written(program, inner), parts.join(" "))
        }
        Ty::List(inner) => format!("List<{}>", written(program, inner)),
        Ty::Optional(inner) => format!("{}?", written(program, inner)),
        other => program.type_name(other),
    }
}

fn action_entry(
    program: &Program,
    a: &jadpo_compiler::ir::Action,
    surface: Option<&Value>,
) -> String {
    let params: Vec<String> = a
        .params
        .iter()
        .map(|(n, t)| format!("{}: {}", n.as_str(), program.type_name(t)))
        .collect();
    let mut out = format!(
        "### `{}({}) -> {}`\n",
        a.qualified,
        params.join(", "),
        program.type_name(&a.ret)
    );
    let fails: Vec<&str> = a
        .fails
        .iter()
        .map(|(f, _)| program.failure(*f).qualified.as_str())
        .collect();
    if !fails.is_empty() {
        out.push_str(&format!("\n- fails: {}", fails.join(", ")));
    }
    let entry = surface
        .and_then(|s| s["actions"].as_array())
        .and_then(|list| {
            list.iter()
                .find(|e| e["name"] == a.qualified || e["name"] == a.name.as_str())
        });
    if let Some(e) = entry {
        let calls = e["changing_calls"].as_u64().unwrap_or(0);
        out.push_str(&format!("\n- changing calls on its longest path: {calls}"));
        let after: Vec<&str> = e["after_effect"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !after.is_empty() {
            out.push_str(&format!(
                "\n- can fail after a change: {}",
                after.join(", ")
            ));
        }
        let budget = e["deadline_budget_ms"].as_u64().unwrap_or(0);
        out.push_str(&format!("\n- deadline budget: {}", duration::text(budget)));
        if let Some(digest) = e["step_shape_digest"].as_str() {
            out.push_str(&format!("\n- step shape digest: `{digest}`"));
        }
    }
    out
}
