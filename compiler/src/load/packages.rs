//! Package resolution: each required package is looked up in the app's
//! `packages/` folder, then at a `{ path: }` requirement's folder, then among
//! the registry's and the bundled first-party packages, with semver matching.
//! Packages' own requirements are resolved the same way, transitively; one
//! package per name, and no cycles.

use super::fields::Reader;
use super::{registry, yaml, Ctx, Folder, LoadedPackage, ReadError};
use crate::diag::{nearest, Diagnostic};
use crate::manifest::{AppManifest, Requirement, RequirementSource};
use crate::source::Unit;
use crate::span::Span;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Names that belong to the standard library and cannot be required.
const RESERVED: &[&str] = &["ai", "clock", "config"];

/// Resolves the app's requirements. The result is sorted by package name.
pub fn resolve_packages<'a>(
    cx: &mut Ctx,
    app: &AppManifest,
    app_root: &Folder<'a>,
    bundled: &Folder<'a>,
) -> Vec<LoadedPackage> {
    let registry = app
        .registry
        .as_ref()
        .map(|r| registry_folder(app_root, &r.node));
    let registry_span = app.registry.as_ref().map(|r| r.span);
    resolve_requirements(cx, app, app_root, bundled, registry, registry_span)
}

/// The registry folder named by `registry:`: relative to the app's folder,
/// or absolute.
pub fn registry_folder<'a>(app_root: &Folder<'a>, path: &str) -> Folder<'a> {
    if path.starts_with('/') {
        Folder {
            loader: app_root.loader,
            path: path.to_string(),
            display: path.to_string(),
        }
    } else {
        app_root.child(path)
    }
}

/// Resolves `app.packages` with an explicit registry folder (`jadpo publish`
/// passes the registry being published to). `registry_span` is where the
/// registry is named, for messages.
pub fn resolve_requirements<'a>(
    cx: &mut Ctx,
    app: &AppManifest,
    app_root: &Folder<'a>,
    bundled: &Folder<'a>,
    registry: Option<Folder<'a>>,
    registry_span: Option<Span>,
) -> Vec<LoadedPackage> {
    let mut res = Resolution {
        cx,
        vendored: app_root.child("packages"),
        bundled: bundled.clone(),
        registry,
        registry_span,
        chosen: BTreeMap::new(),
        order: Vec::new(),
        loaded: Vec::new(),
        edges: Vec::new(),
        queue: VecDeque::new(),
    };
    for req in &app.packages {
        res.queue.push_back(Pending {
            requirer: None,
            folder: app_root.clone(),
            req: req.clone(),
        });
    }
    while let Some(next) = res.queue.pop_front() {
        res.resolve(next);
    }
    res.report_cycles();
    let mut loaded = res.loaded;
    loaded.sort_by(|a, b| a.manifest.name.node.cmp(&b.manifest.name.node));
    loaded
}

/// Loads the package in `folder`, expected to be named `name`.
/// `None` when it has no `package.yaml` or cannot be used (diagnosed).
pub fn load_package_folder(cx: &mut Ctx, folder: &Folder, name: &str) -> Option<LoadedPackage> {
    match load_package(cx, folder, name) {
        Loaded::Package(p) => Some(*p),
        Loaded::NotFound | Loaded::Broken => None,
    }
}

/// Loads a registry package from the bytes its checksum was verified on,
/// shown under the registry folder's name.
fn load_verified(cx: &mut Ctx, folder: &Folder, name: &str, files: Vec<registry::Entry>) -> Loaded {
    let mut memory = super::MemLoader::new();
    for (path, bytes) in files {
        memory.insert(format!("verified/{path}"), bytes);
    }
    let verified = Folder {
        loader: &memory,
        path: "verified".to_string(),
        display: folder.display.clone(),
    };
    load_package(cx, &verified, name)
}

enum Loaded {
    Package(Box<LoadedPackage>),
    /// No `package.yaml` there.
    NotFound,
    /// A `package.yaml` that cannot be used; already diagnosed.
    Broken,
}

fn load_package(cx: &mut Ctx, folder: &Folder, name: &str) -> Loaded {
    let unit = Unit::Package(name.to_string());
    if super::discover::file_escapes(folder, "package.yaml") {
        let problem = super::discover::Problem::Escapes {
            path: "package.yaml".to_string(),
        };
        cx.report_problem(folder, &problem, &unit);
        return Loaded::Broken;
    }
    let file = match cx.read_manifest(folder, "package.yaml", &unit) {
        Ok(file) => file,
        Err(ReadError::NotFound) => return Loaded::NotFound,
        Err(ReadError::Reported) => return Loaded::Broken,
    };
    let text = cx.files.get(file).text.clone();
    let root = match cx.yaml.parse(&text, file) {
        Ok(root) => root,
        Err(d) => {
            cx.diags.push(*d);
            return Loaded::Broken;
        }
    };
    let mut reader = Reader::new(file, &text);
    let manifest = super::package_manifest::read_package_manifest(&mut reader, &root);
    cx.diags.append(&mut reader.diags);
    let Some(manifest) = manifest else {
        return Loaded::Broken;
    };
    let sources = cx.add_sources(folder, &["build", "packages"], true, &unit);
    Loaded::Package(Box::new(LoadedPackage {
        manifest,
        manifest_file: file,
        sources,
        origin: folder.display.clone(),
    }))
}

struct Pending<'a> {
    /// The package that requires it; `None` for the app.
    requirer: Option<String>,
    /// The requirer's folder, for `{ path: }`.
    folder: Folder<'a>,
    req: Requirement,
}

/// The package chosen for a name.
struct Choice {
    origin: String,
    version: Option<semver::Version>,
    /// Where it was first required, and by whom.
    required_at: Span,
    required_by: String,
}

struct Edge {
    from: String,
    to: String,
    span: Span,
}

struct Resolution<'a, 'c> {
    cx: &'c mut Ctx,
    vendored: Folder<'a>,
    bundled: Folder<'a>,
    registry: Option<Folder<'a>>,
    registry_span: Option<Span>,
    chosen: BTreeMap<String, Choice>,
    /// Names in the order they were resolved: nearest to the app first.
    order: Vec<String>,
    loaded: Vec<LoadedPackage>,
    edges: Vec<Edge>,
    queue: VecDeque<Pending<'a>>,
}

impl<'a> Resolution<'a, '_> {
    fn resolve(&mut self, next: Pending<'a>) {
        let name = next.req.name.node.clone();
        if RESERVED.contains(&name.as_str()) {
            self.reserved(&next.req);
            return;
        }
        if let Some(from) = &next.requirer {
            self.edges.push(Edge {
                from: from.clone(),
                to: name.clone(),
                span: next.req.name.span,
            });
        }
        if self.chosen.contains_key(&name) {
            self.check_against_chosen(&next);
            return;
        }
        let picked = match &next.req.source {
            RequirementSource::Path(path) => self.pick_path(&next, &path.node),
            RequirementSource::Version(req) => self.pick_version(&next, &req.node),
        };
        let Some((folder, loaded)) = picked else {
            return;
        };
        self.accept(&next, &folder, loaded);
    }

    fn requirer_words(p: &Pending) -> String {
        match &p.requirer {
            None => "the app".to_string(),
            Some(n) => format!("package `{n}`"),
        }
    }

    /// Records the package chosen for a name and queues its requirements.
    fn accept(&mut self, p: &Pending<'a>, folder: &Folder<'a>, loaded: Loaded) {
        let name = p.req.name.node.clone();
        self.order.push(name.clone());
        let mut choice = Choice {
            origin: folder.display.clone(),
            version: None,
            required_at: p.req.name.span,
            required_by: Self::requirer_words(p),
        };
        if let Loaded::Package(pkg) = loaded {
            if pkg.manifest.name.node != name {
                self.name_mismatch(p, &pkg);
                self.chosen.insert(name, choice);
                return;
            }
            choice.version = Some(pkg.manifest.version.node.clone());
            for req in &pkg.manifest.packages {
                self.queue.push_back(Pending {
                    requirer: Some(name.clone()),
                    folder: folder.clone(),
                    req: req.clone(),
                });
            }
            self.loaded.push(*pkg);
        }
        self.chosen.insert(name, choice);
    }

    fn pick_path(&mut self, p: &Pending<'a>, path: &str) -> Option<(Folder<'a>, Loaded)> {
        let name = &p.req.name.node;
        let folder = p.folder.child(path);
        if p.requirer.is_none() {
            let vendored = self.vendored.child(name);
            if vendored.display != folder.display && self.has_manifest(&vendored) {
                self.duplicate(p, &vendored.display, &folder.display, None);
            }
        }
        match load_package(self.cx, &folder, name) {
            Loaded::NotFound => {
                self.path_missing(p, &folder.display);
                None
            }
            loaded => Some((folder, loaded)),
        }
    }

    fn pick_version(
        &mut self,
        p: &Pending<'a>,
        req: &semver::VersionReq,
    ) -> Option<(Folder<'a>, Loaded)> {
        let name = &p.req.name.node;
        let vendored = self.vendored.child(name);
        if self.has_manifest(&vendored) {
            return self.pick_vendored(p, req, vendored);
        }
        let mut found: Vec<(semver::Version, Folder<'a>)> = self.registry_versions(name);
        // The registry comes before the bundled packages: a matching
        // published version wins over any bundled one.
        if let Some(folder) = best_match(&found, req) {
            let loaded = match self.verify_checksum(p, &folder) {
                // Loaded from the verified bytes, not from the folder again.
                Some(files) => load_verified(self.cx, &folder, name, files),
                None => load_package(self.cx, &folder, name),
            };
            return Some((folder, loaded));
        }
        let bundled = self.bundled.child(name);
        if let Some(v) = peek_version(&mut self.cx.yaml, &bundled) {
            found.push((v, bundled));
        }
        match best_match(&found, req) {
            Some(folder) => {
                let loaded = load_package(self.cx, &folder, name);
                Some((folder, loaded))
            }
            None if found.is_empty() => {
                self.missing(p);
                None
            }
            None => {
                let versions: Vec<(semver::Version, String)> = found
                    .iter()
                    .map(|(v, f)| (v.clone(), f.display.clone()))
                    .collect();
                self.no_matching_version(p, &versions);
                None
            }
        }
    }

    /// The app's own `packages/<name>` wins; its version must match.
    fn pick_vendored(
        &mut self,
        p: &Pending<'a>,
        req: &semver::VersionReq,
        vendored: Folder<'a>,
    ) -> Option<(Folder<'a>, Loaded)> {
        let loaded = load_package(self.cx, &vendored, &p.req.name.node);
        if let Loaded::Package(pkg) = &loaded {
            let v = &pkg.manifest.version.node;
            if !req.matches(v) {
                let versions = vec![(v.clone(), vendored.display.clone())];
                self.no_matching_version(p, &versions);
                return None;
            }
        }
        Some((vendored, loaded))
    }

    fn has_manifest(&self, folder: &Folder) -> bool {
        folder
            .loader
            .list(&folder.path)
            .is_ok_and(|e| e.iter().any(|(n, d)| n == "package.yaml" && !d))
    }

    /// A registry version folder must match its `checksum` file; a
    /// mismatch is reported at the requirement, naming the registry folder.
    /// Returns the verified files when they match.
    fn verify_checksum(&mut self, p: &Pending, folder: &Folder) -> Option<Vec<registry::Entry>> {
        let name = &p.req.name.node;
        let shown = if folder.display.is_empty() {
            "."
        } else {
            &folder.display
        };
        let (code, summary, label) = match registry::verify(folder.loader, &folder.path) {
            registry::Verdict::Intact(files) => return Some(files),
            registry::Verdict::NoChecksum => (
                "package.checksum_missing",
                format!("package `{name}` in the registry at {shown} has no checksum file"),
                "resolved from the registry without a checksum",
            ),
            registry::Verdict::Unreadable(e) => (
                "package.checksum_mismatch",
                format!("package `{name}` in the registry at {shown} cannot be verified: {e}"),
                "resolved from the registry",
            ),
            registry::Verdict::Mismatch { differing } => (
                "package.checksum_mismatch",
                format!(
                    "package `{name}` in the registry at {shown} does not match its checksum{}",
                    differing_words(&differing)
                ),
                "the registry's copy was changed after it was published",
            ),
        };
        let mut d = Diagnostic::error(code, p.req.name.span, summary)
            .with_label(label)
            .with_reason(
                "a published package is checked once and stored with a checksum of its files, \
                 so an app can trust that it uses exactly what was published",
            )
            .with_fix(format!(
                "publish `{name}` again from its source with a new version, or restore the registry's copy"
            ));
        if let Some(span) = self.registry_span {
            d = d.with_related(span, "the registry is named here");
        }
        self.cx.diags.push(d);
        None
    }

    /// `<registry>/<name>/<version>/` folders.
    fn registry_versions(&self, name: &str) -> Vec<(semver::Version, Folder<'a>)> {
        let Some(registry) = &self.registry else {
            return Vec::new();
        };
        let by_name = registry.child(name);
        let entries = by_name.loader.list(&by_name.path).unwrap_or_default();
        let mut out = Vec::new();
        for (dir, is_dir) in entries {
            if let (true, Ok(v)) = (is_dir, semver::Version::parse(&dir)) {
                out.push((v, by_name.child(&dir)));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// A later requirement of a name already resolved must accept that package.
    fn check_against_chosen(&mut self, p: &Pending<'a>) {
        let name = &p.req.name.node;
        let Some(choice) = self.chosen.get(name) else {
            return;
        };
        match &p.req.source {
            RequirementSource::Version(req) => {
                let Some(v) = &choice.version else { return };
                if !req.node.matches(v) {
                    let written = self.written(req.span);
                    let d = Diagnostic::error(
                        "package.version_conflict",
                        req.span,
                        format!(
                            "{} requires {name} \"{written}\", but {name} {v} is used",
                            Self::requirer_words(p),
                        ),
                    )
                    .with_label("does not match the version in use")
                    .with_related(choice.required_at, format!("{name} {v} required here by {}", choice.required_by))
                    .with_reason("an app uses one package per name, so every requirement of it must accept the same version")
                    .with_fix(format!("widen this requirement to accept {name} {v}"));
                    self.cx.diags.push(d);
                }
            }
            RequirementSource::Path(path) => {
                let target = p.folder.child(&path.node).display;
                if target != choice.origin {
                    let first = choice.origin.clone();
                    let at = choice.required_at;
                    self.duplicate(p, &first, &target, Some(at));
                }
            }
        }
    }

    /// A requirement as the author wrote it, without quotes.
    fn written(&self, span: Span) -> String {
        let text = self.cx.files.slice(span);
        text.trim_matches(|c| c == '"' || c == '\'').to_string()
    }

    fn reserved(&mut self, req: &Requirement) {
        let name = &req.name.node;
        self.cx.diags.push(
            Diagnostic::error(
                "package.reserved_name",
                req.name.span,
                format!("`{name}` is part of the standard library and cannot be required"),
            )
            .with_label("always available")
            .with_reason(
                "every app has the standard library (`ai`, `clock`, `config`) without asking",
            )
            .with_fix(format!("remove the `{name}` requirement")),
        );
    }

    fn available(&self) -> Vec<(String, String)> {
        let mut names: BTreeSet<(String, String)> = BTreeSet::new();
        for (root, label) in [(&self.vendored, "in packages/"), (&self.bundled, "bundled")] {
            for (n, d) in root.loader.list(&root.path).unwrap_or_default() {
                if d && self.has_manifest(&root.child(&n)) {
                    names.insert((n, label.to_string()));
                }
            }
        }
        if let Some(reg) = &self.registry {
            for (n, d) in reg.loader.list(&reg.path).unwrap_or_default() {
                if d {
                    names.insert((n, "in the registry".to_string()));
                }
            }
        }
        names.into_iter().collect()
    }

    fn missing(&mut self, p: &Pending) {
        let name = &p.req.name.node;
        let available = self.available();
        let mut d = Diagnostic::error(
            "package.missing",
            p.req.name.span,
            format!("no package named `{name}`"),
        )
        .with_label("not found")
        .with_reason(format!(
            "packages are looked up in the app's packages/{name}/, then among the first-party packages bundled with jadpo"
        ));
        if let Some(near) = nearest(name, available.iter().map(|(n, _)| n.as_str())) {
            d = d.with_did_you_mean(p.req.name.span, near);
        }
        d = d.with_fix(format!(
            "put the package in packages/{name}/, or require it with `{{ path: <folder> }}`"
        ));
        if !available.is_empty() {
            let list: Vec<String> = available
                .iter()
                .map(|(n, w)| format!("{n} ({w})"))
                .collect();
            d = d.with_help(format!("available packages: {}", list.join(", ")));
        }
        self.cx.diags.push(d);
    }

    fn no_matching_version(&mut self, p: &Pending, versions: &[(semver::Version, String)]) {
        let name = &p.req.name.node;
        let span = match &p.req.source {
            RequirementSource::Version(v) => v.span,
            RequirementSource::Path(_) => p.req.span,
        };
        let req = self.written(span);
        let bundled = |at: &str| at.starts_with("<bundled>");
        let found: Vec<String> = versions
            .iter()
            .map(|(v, at)| match bundled(at) {
                true => format!("{v}, bundled with jadpo"),
                false => format!("{v} in {at}"),
            })
            .collect();
        let mut d = Diagnostic::error(
            "package.no_matching_version",
            span,
            format!(
                "no version of `{name}` matches \"{req}\": found {}",
                found.join("; ")
            ),
        )
        .with_label(match req.parse::<u64>() {
            Ok(major) => format!("allows {major}.x releases only"),
            Err(_) => format!("allows \"{req}\" only"),
        })
        .with_reason(
            "a requirement such as \"3\" takes the newest release of that major version; \
             a new major version changes the package's actions or types, so another one is \
             never taken in its place",
        );
        let newest = versions.iter().map(|(v, _)| v).max();
        if let (Some(v), RequirementSource::Version(_)) = (newest, &p.req.source) {
            let edit = crate::diag::Edit {
                span,
                replacement: format!("\"{}\"", v.major),
            };
            d = d.with_edit_fix(
                format!(
                    "require \"{}\", the major version of {v} (and adapt the app to its changes)",
                    v.major
                ),
                vec![edit],
            );
        }
        let vendored = versions.iter().any(|(_, at)| !bundled(at));
        self.cx.diags.push(d.with_fix(match vendored {
            true => format!("or replace the copy of `{name}` found with a version that matches"),
            false => format!("or put a copy of `{name}` whose version matches in packages/{name}"),
        }));
    }

    fn path_missing(&mut self, p: &Pending, shown: &str) {
        let shown = if shown.is_empty() { "." } else { shown };
        let span = match &p.req.source {
            RequirementSource::Path(path) => path.span,
            RequirementSource::Version(_) => p.req.span,
        };
        self.cx.diags.push(
            Diagnostic::error(
                "package.path_missing",
                span,
                format!(
                    "no package.yaml in {shown} for package `{}`",
                    p.req.name.node
                ),
            )
            .with_label("no package here")
            .with_fix("point `path:` at the folder holding the package's package.yaml"),
        );
    }

    fn duplicate(&mut self, p: &Pending, first: &str, second: &str, first_at: Option<Span>) {
        let name = &p.req.name.node;
        let mut d = Diagnostic::error(
            "package.duplicate",
            p.req.name.span,
            format!("two packages are named `{name}`: {first} and {second}"),
        )
        .with_label(format!("requires {second}"))
        .with_reason(
            "an app uses one package per name, so its types and operations have one meaning",
        )
        .with_fix("remove one of the two copies, or require the same one everywhere");
        if let Some(at) = first_at {
            d = d.with_related(at, format!("requires {first}"));
        }
        self.cx.diags.push(d);
    }

    fn name_mismatch(&mut self, p: &Pending, pkg: &LoadedPackage) {
        let wanted = &p.req.name.node;
        let declared = &pkg.manifest.name.node;
        self.cx.diags.push(
            Diagnostic::error(
                "package.name_mismatch",
                pkg.manifest.name.span,
                format!("the package in {} is named `{declared}`, but it is required as `{wanted}`", pkg.origin),
            )
            .with_label(format!("declared as `{declared}`"))
            .with_related(p.req.name.span, format!("required as `{wanted}`"))
            .with_reason("a package is called through its name, so the name it declares and the name it is required by must agree")
            .with_fix(format!("require it as `{declared}`, or rename the package to `{wanted}`")),
        );
    }

    /// Reports each cycle of packages requiring each other once.
    fn report_cycles(&mut self) {
        let mut graph: BTreeMap<&str, Vec<&Edge>> = BTreeMap::new();
        for e in &self.edges {
            graph.entry(e.from.as_str()).or_default().push(e);
        }
        let mut reported: BTreeSet<Vec<String>> = BTreeSet::new();
        let mut diags = Vec::new();
        for start in graph.keys() {
            let mut search = CycleSearch {
                graph: &graph,
                start,
                path: Vec::new(),
                done: BTreeSet::new(),
            };
            if !search.from(start) {
                continue;
            }
            let mut key: Vec<String> = search.path.iter().map(|e| e.from.clone()).collect();
            key.sort();
            if reported.insert(key) {
                // Start the cycle at the package nearest to the app, so the
                // report sits where the author meets the cycle first.
                let rank = |e: &&Edge| self.order.iter().position(|n| *n == e.from);
                let mut cycle = search.path.clone();
                if let Some(first) = cycle
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, e)| rank(e))
                    .map(|(i, _)| i)
                {
                    cycle.rotate_left(first);
                }
                diags.push(cycle_diagnostic(&cycle));
            }
        }
        self.cx.diags.extend(diags);
    }
}

/// Depth-first search for a path of edges leading back to `start`. Only
/// names after `start` are visited, so each cycle is found from its first
/// name.
struct CycleSearch<'g, 'e> {
    graph: &'g BTreeMap<&'e str, Vec<&'e Edge>>,
    start: &'e str,
    path: Vec<&'e Edge>,
    /// Names fully searched without finding `start`.
    done: BTreeSet<&'e str>,
}

impl<'e> CycleSearch<'_, 'e> {
    fn from(&mut self, at: &'e str) -> bool {
        let edges: &[&'e Edge] = self.graph.get(at).map(Vec::as_slice).unwrap_or(&[]);
        for edge in edges {
            self.path.push(edge);
            if edge.to == self.start {
                return true;
            }
            let to = edge.to.as_str();
            let on_path = self.path.iter().any(|e| e.from == to);
            if !on_path && !self.done.contains(to) && to > self.start && self.from(to) {
                return true;
            }
            self.path.pop();
        }
        self.done.insert(at);
        false
    }
}

fn cycle_diagnostic(cycle: &[&Edge]) -> Diagnostic {
    let mut names: Vec<&str> = cycle.iter().map(|e| e.from.as_str()).collect();
    let Some((first, rest)) = cycle.split_first() else {
        return Diagnostic::error(
            "package.cycle",
            Span::default(),
            "packages require each other",
        );
    };
    names.push(first.from.as_str());
    let shown = names.join(" -> ");
    let mut d = Diagnostic::error(
        "package.cycle",
        first.span,
        format!("packages require each other in a cycle: {shown}"),
    )
    .with_label(format!(
        "`{}` requires `{}`, which leads back to `{}`",
        first.from, first.to, first.from
    ))
    .with_reason(
        "a package is checked after the packages it requires, which a cycle makes impossible",
    )
    .with_fix("move what the packages share into another package that each of them requires");
    for e in rest {
        d = d.with_related(e.span, format!("`{}` requires `{}`", e.from, e.to));
    }
    d
}

/// The folder of the highest version in `found` that `req` accepts.
fn best_match<'a>(
    found: &[(semver::Version, Folder<'a>)],
    req: &semver::VersionReq,
) -> Option<Folder<'a>> {
    found
        .iter()
        .filter(|(v, _)| req.matches(v))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, f)| f.clone())
}

/// `: src/x.jadpo was changed` style words for the files that differ.
fn differing_words(files: &[String]) -> String {
    match files {
        [] => String::new(),
        [one] => format!(" (`{one}` differs)"),
        [first, rest @ ..] => format!(" (`{first}` and {} more differ)", rest.len()),
    }
}

/// The version a folder's `package.yaml` declares, read without diagnostics.
fn peek_version(yaml: &mut yaml::Cache, folder: &Folder) -> Option<semver::Version> {
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
        .find(|(k, _)| k.value == yaml::Value::Str("version".into()))?;
    semver::Version::parse(v.scalar_text(&text)?.trim()).ok()
}
