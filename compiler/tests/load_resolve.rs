//! Package resolution: missing packages, versions, duplicates, cycles,
//! escapes, transitive requirements, and the bundled packages.

use crate::load_support;

use jadpo_compiler::load::{load_project, Bundled};
use load_support::*;

fn manifest(name: &str, version: &str, requires: &str) -> String {
    format!("package: {name}\nversion: {version}\n{requires}")
}

/// Bundled packages for these tests: stripe 3.1.0 and github 1.2.0.
fn bundled_mem() -> &'static MemLoader {
    static B: std::sync::OnceLock<MemLoader> = std::sync::OnceLock::new();
    B.get_or_init(|| {
        MemLoader::new()
            .with("stripe/package.yaml", manifest("stripe", "3.1.0", ""))
            .with("stripe/stripe.jadpo", "")
            .with("github/package.yaml", manifest("github", "1.2.0", ""))
    })
}

fn bundled() -> Bundled<'static> {
    Bundled {
        stdlib: no_bundled(),
        packages: bundled_mem(),
    }
}

fn app(packages: &str) -> MemLoader {
    MemLoader::new().with(
        "app/jadpo.yaml",
        format!("app: shop\npackages:\n{packages}"),
    )
}

#[test]
fn version_requirement_matches_minor_versions() {
    let mem = app("  stripe: \"3\"\n  github: 1\n");
    let result = load(&mem, bundled());
    assert_eq!(codes(&result), Vec::<&str>::new());
    let Ok(p) = result else { panic!("fatal") };
    let names: Vec<_> = p
        .packages
        .iter()
        .map(|p| p.manifest.name.node.as_str())
        .collect();
    assert_eq!(names, ["github", "stripe"]);
    assert_eq!(p.packages[1].origin, "<bundled>/stripe");
    assert_eq!(
        p.files.get(p.packages[1].sources[0]).path,
        "<bundled>/stripe/stripe.jadpo"
    );
}

#[test]
fn missing_package_names_the_nearest() {
    let mem = app("  strpe: \"3\"\n");
    insta::assert_snapshot!(render_load(&load(&mem, bundled())));
}

#[test]
fn no_matching_version_names_versions_found() {
    let mem = app("  stripe: \"2\"\n");
    insta::assert_snapshot!(render_load(&load(&mem, bundled())));
}

#[test]
fn vendored_package_wins_and_must_match() {
    let mem = app("  stripe: \"3\"\n").with(
        "app/packages/stripe/package.yaml",
        manifest("stripe", "2.0.0", ""),
    );
    insta::assert_snapshot!(render_load(&load(&mem, bundled())));
    let mem = app("  stripe: \"2\"\n").with(
        "app/packages/stripe/package.yaml",
        manifest("stripe", "2.0.0", ""),
    );
    let Ok(p) = load(&mem, bundled()) else {
        panic!("fatal")
    };
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    assert_eq!(p.packages[0].origin, "packages/stripe");
}

#[test]
fn two_packages_with_one_name() {
    let mem = app("  mailer: { path: vendor/mailer }\n")
        .with(
            "app/vendor/mailer/package.yaml",
            manifest("mailer", "1.0.0", ""),
        )
        .with(
            "app/packages/mailer/package.yaml",
            manifest("mailer", "1.1.0", ""),
        );
    insta::assert_snapshot!(render_load(&load(&mem, bundled())));
}

#[test]
fn packages_requiring_each_other_in_a_cycle() {
    let mem = app("  alpha: \"1\"\n")
        .with(
            "app/packages/alpha/package.yaml",
            manifest("alpha", "1.0.0", "packages:\n  beta: \"1\"\n"),
        )
        .with(
            "app/packages/beta/package.yaml",
            manifest("beta", "1.0.0", "packages:\n  gamma: \"1\"\n"),
        )
        .with(
            "app/packages/gamma/package.yaml",
            manifest("gamma", "1.0.0", "packages:\n  alpha: \"1\"\n"),
        );
    let result = load(&mem, bundled());
    assert_eq!(codes(&result), ["package.cycle"]);
    insta::assert_snapshot!(render_load(&result));
}

#[test]
fn transitive_requirements_are_resolved() {
    let mem = app("  billing_kit: \"1\"\n")
        .with(
            "app/packages/billing_kit/package.yaml",
            manifest(
                "billing_kit",
                "1.0.0",
                "packages:\n  stripe: \"3.1\"\n  notes: { path: vendor/notes }\n",
            ),
        )
        .with(
            "app/packages/billing_kit/vendor/notes/package.yaml",
            manifest("notes", "0.1.0", ""),
        )
        .with("app/packages/billing_kit/kit.jadpo", "")
        .with("app/packages/billing_kit/vendor/notes/notes.jadpo", "");
    let Ok(p) = load(&mem, bundled()) else {
        panic!("fatal")
    };
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let names: Vec<_> = p
        .packages
        .iter()
        .map(|p| (p.manifest.name.node.as_str(), p.sources.len()))
        .collect();
    // The nested package's sources belong to it, not to billing_kit.
    assert_eq!(names, [("billing_kit", 1), ("notes", 1), ("stripe", 1)]);
}

#[test]
fn conflicting_versions_between_app_and_package() {
    let mem = app("  stripe: \"3\"\n  billing_kit: \"1\"\n").with(
        "app/packages/billing_kit/package.yaml",
        manifest("billing_kit", "1.0.0", "packages:\n  stripe: \"2\"\n"),
    );
    insta::assert_snapshot!(render_load(&load(&mem, bundled())));
}

#[test]
fn package_path_requirement_cannot_leave_its_folder() {
    let mem = app("  billing_kit: \"1\"\n").with(
        "app/packages/billing_kit/package.yaml",
        manifest(
            "billing_kit",
            "1.0.0",
            "packages:\n  notes: { path: ../../vendor/notes }\n",
        ),
    );
    insta::assert_snapshot!(render_load(&load(&mem, bundled())));
}

#[test]
fn name_mismatch_and_missing_path() {
    let mem = app("  mailer: { path: vendor/mailer }\n  notes: { path: vendor/notes }\n").with(
        "app/vendor/mailer/package.yaml",
        manifest("postbox", "1.0.0", ""),
    );
    insta::assert_snapshot!(render_load(&load(&mem, bundled())));
}

#[test]
fn standard_library_names_are_reserved() {
    let mem = app("  ai: \"1\"\n");
    assert_eq!(codes(&load(&mem, bundled())), ["package.reserved_name"]);
}

#[test]
fn registry_versions_are_matched() {
    let mem = MemLoader::new()
        .with(
            "app/jadpo.yaml",
            "app: shop\nregistry: ../registry\npackages:\n  mailer: \"1.2\"\n",
        )
        .with(
            "registry/mailer/1.1.0/package.yaml",
            manifest("mailer", "1.1.0", ""),
        )
        .with(
            "registry/mailer/1.2.3/package.yaml",
            manifest("mailer", "1.2.3", ""),
        )
        .with(
            "registry/mailer/1.2.3/checksum",
            published(&[("package.yaml", &manifest("mailer", "1.2.3", ""))]),
        )
        .with(
            "registry/mailer/2.0.0/package.yaml",
            manifest("mailer", "2.0.0", ""),
        );
    let Ok(p) = load(&mem, bundled()) else {
        panic!("fatal")
    };
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    assert_eq!(p.packages[0].manifest.version.node.to_string(), "1.2.3");
    assert_eq!(p.packages[0].origin, "../registry/mailer/1.2.3");
}

/// The `checksum` file `jadpo publish` writes for these files.
fn published(files: &[(&str, &str)]) -> String {
    let entries: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(path, text)| (path.to_string(), text.as_bytes().to_vec()))
        .collect();
    jadpo_compiler::load::registry::checksum_file(&entries)
}

/// An app requiring stripe "3" from a registry holding stripe 3.1.0, the
/// same version as the bundled copy, with `checksum` as given.
fn registry_stripe(checksum: Option<String>) -> MemLoader {
    let yaml = manifest("stripe", "3.1.0", "");
    let mut mem = MemLoader::new()
        .with(
            "app/jadpo.yaml",
            "app: shop\nregistry: ../registry\npackages:\n  stripe: \"3\"\n",
        )
        .with("registry/stripe/3.1.0/package.yaml", yaml.clone())
        .with("registry/stripe/3.1.0/a.jadpo", "type A = Text\n");
    if let Some(c) = checksum {
        mem.insert("registry/stripe/3.1.0/checksum", c);
    }
    mem
}

#[test]
fn the_registry_wins_over_the_bundled_packages() {
    let yaml = manifest("stripe", "3.1.0", "");
    let sum = published(&[("package.yaml", &yaml), ("a.jadpo", "type A = Text\n")]);
    let Ok(p) = load(&registry_stripe(Some(sum)), bundled()) else {
        panic!("fatal")
    };
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    assert_eq!(p.packages[0].origin, "../registry/stripe/3.1.0");
}

#[test]
fn a_changed_registry_file_fails_its_checksum() {
    let yaml = manifest("stripe", "3.1.0", "");
    let sum = published(&[("package.yaml", &yaml), ("a.jadpo", "type A = Int\n")]);
    let result = load(&registry_stripe(Some(sum)), bundled());
    assert_eq!(codes(&result), ["package.checksum_mismatch"]);
    let Ok(p) = result else { panic!("fatal") };
    let summary = &p.diagnostics[0].summary;
    assert!(summary.contains("`stripe`"), "{summary}");
    assert!(summary.contains("../registry/stripe/3.1.0"), "{summary}");
    assert!(summary.contains("`a.jadpo` differs"), "{summary}");
    assert_eq!(
        codes(&load(&registry_stripe(None), bundled())),
        ["package.checksum_missing"]
    );
}

/// A registry whose `a.jadpo` is swapped right after its first read, as a
/// concurrent writer could (96 of 300 loads once took the swapped file).
struct Swapping {
    inner: MemLoader,
    reads: std::sync::atomic::AtomicUsize,
}

impl jadpo_compiler::load::Loader for Swapping {
    fn read(&self, path: &str) -> std::io::Result<Vec<u8>> {
        if path.ends_with("3.1.0/a.jadpo") {
            let n = self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n > 0 {
                return Ok(b"type A = Int\n".to_vec());
            }
        }
        self.inner.read(path)
    }

    fn list(&self, path: &str) -> std::io::Result<Vec<(String, bool)>> {
        self.inner.list(path)
    }
}

#[test]
fn a_registry_package_is_loaded_from_the_bytes_it_was_verified_on() {
    let yaml = manifest("stripe", "3.1.0", "");
    let sum = published(&[("package.yaml", &yaml), ("a.jadpo", "type A = Text\n")]);
    let swapping = Swapping {
        inner: registry_stripe(Some(sum)),
        reads: std::sync::atomic::AtomicUsize::new(0),
    };
    let Ok(p) = jadpo_compiler::load::load_project_with(&swapping, "app", bundled()) else {
        panic!("fatal")
    };
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let texts: Vec<&str> = p.files.iter().map(|(_, f)| &*f.text).collect();
    assert!(texts.contains(&"type A = Text\n"), "{texts:?}");
    assert!(
        !texts.contains(&"type A = Int\n"),
        "the swapped file was loaded"
    );
}

#[test]
fn first_party_packages_load_without_diagnostics() {
    let mem = MemLoader::new().with(
        "app/jadpo.yaml",
        "app: shop\npackages:\n  stripe: \"3\"\n  adyen: \"1\"\n  paypal: \"2\"\n  github: \"1\"\n  twilio: \"1\"\n  postmark: \"1\"\n",
    );
    let Ok(p) = load_project(&mem, "app") else {
        panic!("fatal")
    };
    assert_eq!(render(&p.files, &p.diagnostics), "(no diagnostics)\n");
    let names: Vec<_> = p
        .packages
        .iter()
        .map(|p| p.manifest.name.node.as_str())
        .collect();
    assert_eq!(
        names,
        ["adyen", "github", "paypal", "postmark", "stripe", "twilio"]
    );
    for pkg in &p.packages {
        assert!(!pkg.sources.is_empty(), "{} has no sources", pkg.origin);
    }
    let stripe = &p.packages[4].manifest;
    assert_eq!(stripe.version.node.to_string(), "3.3.0");
    assert_eq!(stripe.operations.len(), 10);
    let idem = stripe
        .provider
        .idempotency
        .as_ref()
        .expect("stripe takes keys");
    assert_eq!(idem.window_ms.node, 24 * 3_600_000);
    assert!(idem.replays_failures);
    // The `ai` package is always there.
    let ai: Vec<_> = p
        .stdlib_packages
        .iter()
        .map(|p| p.manifest.name.node.as_str())
        .collect();
    assert_eq!(ai, ["ai"]);
    let generate = &p.stdlib_packages[0].manifest.operations[0];
    assert_eq!(generate.name.node, "generate");
    assert!(!generate.changes);
    assert_eq!(p.stdlib_packages[0].manifest.provider.timeout_ms, 60_000);
    assert_eq!(p.stdlib_sources.len(), 2);
}

#[test]
fn every_first_party_manifest_on_disk_reads_cleanly() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../packages");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root).expect("packages folder") {
        let entry = entry.expect("entry");
        if entry.path().join("package.yaml").exists() {
            names.push(entry.file_name().into_string().expect("utf-8 name"));
        }
    }
    names.sort();
    assert_eq!(
        names,
        ["adyen", "github", "paypal", "postmark", "stripe", "twilio"]
    );
    for name in names {
        let mem = MemLoader::new().with(
            "app/jadpo.yaml",
            format!("app: shop\npackages:\n  {name}: {{ path: ../pkgs/{name} }}\n"),
        );
        let mem = copy_folder(mem, &format!("{root}/{name}"), &format!("pkgs/{name}"));
        let Ok(p) = load(&mem, empty_bundled()) else {
            panic!("fatal")
        };
        assert_eq!(
            render(&p.files, &p.diagnostics),
            "(no diagnostics)\n",
            "{name}"
        );
        let readme =
            std::fs::read_to_string(format!("{root}/{name}/README.md")).expect("README.md");
        for heading in ["## Facts and sources", "### What "] {
            assert!(readme.contains(heading), "{name}: no `{heading}`");
        }
        assert!(
            readme.contains("| source |"),
            "{name}: facts without sources"
        );
    }
}

/// Copies a folder and its subfolders (a package's `tests/`) into `mem`.
fn copy_folder(mut mem: MemLoader, from: &str, to: &str) -> MemLoader {
    for entry in std::fs::read_dir(from).expect("folder") {
        let entry = entry.expect("entry");
        let name = entry.file_name().into_string().expect("utf-8 name");
        if entry.path().is_dir() {
            mem = copy_folder(mem, &format!("{from}/{name}"), &format!("{to}/{name}"));
            continue;
        }
        let bytes = std::fs::read(entry.path()).expect("file");
        mem.insert(format!("{to}/{name}"), bytes);
    }
    mem
}
