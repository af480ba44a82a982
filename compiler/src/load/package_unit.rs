//! Loading one package folder as the unit being checked (`jadpo publish`):
//! the package itself, the packages it requires (from its own `packages/`
//! folder, its `{ path: }` requirements, the registry being published to,
//! then the bundled packages) and the standard library. There are no app
//! sources; the app manifest is made from the package's own requirements.

use super::{loaders, packages, yaml, Bundled, Ctx, Fatal, Folder, LoadedProject, Loader};
use crate::diag::Diagnostic;
use crate::manifest::AppManifest;
use crate::source::Unit;
use crate::span::{Span, Spanned};

/// Loads the package at `root`. `registry` is a folder (as the loader reads
/// it) to resolve required packages from. The package is in `packages`,
/// with the packages it requires.
pub fn load_package_unit(
    loader: &dyn Loader,
    root: &str,
    registry: Option<&str>,
) -> Result<LoadedProject, Fatal> {
    load_package_unit_with(loader, root, registry, Bundled::builtin())
}

/// [`load_package_unit`] with the standard library and first-party
/// packages taken from `bundled`.
pub fn load_package_unit_with(
    loader: &dyn Loader,
    root: &str,
    registry: Option<&str>,
    bundled: Bundled,
) -> Result<LoadedProject, Fatal> {
    let _loading = super::Loading::begin(loader);
    let folder = Folder {
        loader,
        path: root.to_string(),
        display: String::new(),
    };
    let mut cx = Ctx::default();
    let name = peek_name(&mut cx.yaml, &folder).unwrap_or_else(|| folder_name(root));
    let Some(package) = packages::load_package_folder(&mut cx, &folder, &name) else {
        if cx.diags.is_empty() {
            no_manifest(&mut cx, root, &name);
        }
        return Err(cx.fatal());
    };
    let app = AppManifest {
        app: Spanned::new(name, package.manifest.name.span),
        packages: package.manifest.packages.clone(),
        registry: None,
    };
    let stdlib_root = Folder {
        loader: bundled.stdlib,
        path: String::new(),
        display: "<stdlib>".to_string(),
    };
    let (stdlib_sources, stdlib_packages) = super::load_stdlib(&mut cx, &stdlib_root);
    let bundled_root = Folder {
        loader: bundled.packages,
        path: String::new(),
        display: "<bundled>".to_string(),
    };
    let registry = registry.map(|r| Folder {
        loader,
        path: r.to_string(),
        display: r.to_string(),
    });
    let mut required =
        packages::resolve_requirements(&mut cx, &app, &folder, &bundled_root, registry, None);
    let manifest_file = package.manifest_file;
    required.retain(|p| p.manifest.name.node != app.app.node);
    required.push(package);
    required.sort_by(|a, b| a.manifest.name.node.cmp(&b.manifest.name.node));
    let tested_package = Some(app.app.node.clone());
    Ok(LoadedProject {
        files: cx.files,
        app,
        app_manifest_file: manifest_file,
        app_sources: Vec::new(),
        stdlib_sources,
        stdlib_packages,
        packages: required,
        diagnostics: cx.diags,
        tested_package,
    })
}

/// The `package:` name in `package.yaml`, read without diagnostics (loading
/// it for real reports its problems).
fn peek_name(yaml: &mut yaml::Cache, folder: &Folder) -> Option<String> {
    let bytes = yaml::read_bounded(
        folder.loader,
        &super::loaders::join(&folder.path, "package.yaml"),
    )?;
    let text = String::from_utf8(bytes).ok()?;
    let root = yaml.parse(&text, crate::span::FileId(0)).ok()?;
    let yaml::Value::Map(entries) = &root.value else {
        return None;
    };
    let (_, v) = entries
        .iter()
        .find(|(k, _)| k.value == yaml::Value::Str("package".into()))?;
    let name = v.scalar_text(&text)?.trim().to_string();
    (!name.is_empty()).then_some(name)
}

/// The last segment of a folder path, for a package whose name cannot be read.
#[doc(hidden)]
pub fn folder_name(root: &str) -> String {
    root.trim_end_matches('/')
        .rsplit('/')
        .find(|s| !s.is_empty() && *s != ".")
        .unwrap_or("package")
        .to_string()
}

fn no_manifest(cx: &mut Ctx, root: &str, name: &str) {
    let shown = if root.is_empty() { "." } else { root };
    let file = cx.files.add(
        loaders::join(root, "package.yaml"),
        "",
        Unit::Package(name.to_string()),
    );
    cx.diags.push(
        Diagnostic::error(
            "manifest.missing",
            Span::new(file, 0, 0),
            format!("no package.yaml in {shown}: pass the folder of the package to publish"),
        )
        .with_reason("a package is a folder with a package.yaml naming the package, its version and its operations")
        .with_fix("create package.yaml with `package: <name>` and `version: <semver>`"),
    );
}
