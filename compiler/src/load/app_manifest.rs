//! Reading `jadpo.yaml` into [`AppManifest`], and the `packages:`
//! requirements that `jadpo.yaml` and `package.yaml` share.

use super::fields::{is_package_name, Reader};
use super::loaders::{escapes, normalize_relative};
use super::yaml::{Node, Value};
use crate::diag::Diagnostic;
use crate::manifest::{AppManifest, Requirement, RequirementSource};
use crate::span::Spanned;

const TOP_KEYS: &[&str] = &["app", "packages", "registry"];
const PATH_KEYS: &[&str] = &["path"];

/// Reads a parsed `jadpo.yaml`. Always returns a manifest; what could not be
/// read is left out and diagnosed.
pub fn read_app_manifest(r: &mut Reader, root: &Node) -> AppManifest {
    let fallback = Spanned::new(String::new(), r.header_span(root));
    let Some(top) = r.fields(root, "jadpo.yaml", TOP_KEYS) else {
        return AppManifest {
            app: fallback,
            packages: Vec::new(),
            registry: None,
        };
    };
    let app = match top.get("app") {
        Some(n) => read_app_name(r, n),
        None => {
            r.missing_key(
                root,
                "app",
                "this jadpo.yaml",
                "the app's name identifies it in plans, records and messages",
                "app: <name>",
            );
            None
        }
    };
    let packages = top
        .get("packages")
        .map(|n| read_requirements(r, n, false))
        .unwrap_or_default();
    let registry = top
        .get("registry")
        .and_then(|n| r.text(n, "a folder of published packages for `registry`"));
    AppManifest {
        app: app.unwrap_or(fallback),
        packages,
        registry,
    }
}

fn read_app_name(r: &mut Reader, node: &Node) -> Option<Spanned<String>> {
    let name = r.text(node, "the app's name, such as billing")?;
    if !is_package_name(&name.node) {
        r.push(
            Diagnostic::error(
                "manifest.bad_name",
                name.span,
                format!("`{}` is not a valid app name", name.node),
            )
            .with_label("not lower_snake_case")
            .with_help("an app name is lowercase letters, digits and `_`, starting with a letter"),
        );
        return None;
    }
    Some(name)
}

/// `packages:` of `jadpo.yaml` or `package.yaml`, in file order.
/// `in_package`: a package's path requirements must stay inside its folder.
pub fn read_requirements(r: &mut Reader, node: &Node, in_package: bool) -> Vec<Requirement> {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(
            node,
            "`packages` to be a mapping from package names to versions, such as `stripe: \"3\"`",
        );
        return Vec::new();
    };
    let mut out: Vec<Requirement> = Vec::new();
    for (key, value) in entries {
        let Some(name) = r.text(key, "a package name") else {
            continue;
        };
        if !is_package_name(&name.node) {
            r.push(
                Diagnostic::error(
                    "manifest.bad_name",
                    name.span,
                    format!("`{}` is not a valid package name", name.node),
                )
                .with_label("not lower_snake_case")
                .with_help(
                    "a package name is lowercase letters, digits and `_`, starting with a letter",
                ),
            );
            continue;
        }
        if let Some(first) = out.iter().find(|q| q.name.node == name.node) {
            let first_span = first.name.span;
            r.push(
                Diagnostic::error(
                    "manifest.duplicate_key",
                    name.span,
                    format!("package `{}` is required twice", name.node),
                )
                .with_label("required again here")
                .with_related(first_span, "first required here")
                .with_fix("keep one requirement"),
            );
            continue;
        }
        if let Some(source) = read_source(r, &name.node, value, in_package) {
            let span = r.span(key).to(r.span(value));
            out.push(Requirement { name, source, span });
        }
    }
    out
}

fn read_source(
    r: &mut Reader,
    name: &str,
    node: &Node,
    in_package: bool,
) -> Option<RequirementSource> {
    if let Value::Map(_) = node.value {
        let fields = r.fields(node, &format!("the requirement of `{name}`"), PATH_KEYS)?;
        let Some(path_node) = fields.get("path") else {
            r.missing_key(
                node,
                "path",
                &format!("the requirement of `{name}`"),
                "a package is required either by version or by folder",
                "path: vendor/<name>",
            );
            return None;
        };
        let path = r.text(path_node, "a folder for `path`")?;
        return check_path(r, path, in_package).map(RequirementSource::Path);
    }
    let text = r.scalar(
        node,
        &format!("a version requirement such as \"3\" or {{ path: vendor/{name} }}"),
    )?;
    match semver::VersionReq::parse(text.node.trim()) {
        Ok(req) => Some(RequirementSource::Version(Spanned::new(req, text.span))),
        Err(e) => {
            r.push(
                Diagnostic::error(
                    "manifest.bad_requirement",
                    text.span,
                    format!("`{}` is not a version requirement", text.node),
                )
                .with_label(e.to_string())
                .with_help("write a version requirement such as \"3\", \"3.1\" or \">=3.1, <4\""),
            );
            None
        }
    }
}

/// A path requirement must be relative; inside a package it must also stay
/// inside the package's folder.
fn check_path(r: &mut Reader, path: Spanned<String>, in_package: bool) -> Option<Spanned<String>> {
    let Some(norm) = normalize_relative(&path.node) else {
        r.push(
            Diagnostic::error(
                "manifest.bad_path",
                path.span,
                format!("`{}` is not a relative folder", path.node),
            )
            .with_label("absolute path")
            .with_reason("a project must check the same way on every machine, so folders are written relative to the manifest")
            .with_fix("write the folder relative to this manifest, with `/` separators"),
        );
        return None;
    };
    if in_package && (escapes(&norm) || norm.is_empty()) {
        r.push(
            Diagnostic::error(
                "package.path_escapes",
                path.span,
                format!("`{}` is outside this package's folder", path.node),
            )
            .with_label("leaves the package")
            .with_reason("a package's sources cannot reach outside its folder, so it checks the same wherever it is used")
            .with_fix("move the required package inside this package's folder, or require it by version"),
        );
        return None;
    }
    Some(Spanned::new(norm, path.span))
}
