//! Source discovery: which `.jadpo` files belong to the app, in an order
//! that does not depend on folder listing order; unreadable and invalid
//! UTF-8 files; symlink loops on disk.

use crate::load_support;

use load_support::*;

fn app() -> MemLoader {
    MemLoader::new()
        .with("app/jadpo.yaml", "app: shop\n")
        .with("app/zeta.jadpo", "")
        .with("app/alpha.jadpo", "")
        .with("app/src/billing/invoices.jadpo", "")
        .with("app/src/a.jadpo", "")
        .with("app/src/notes.txt", "")
        .with("app/build/plan.jadpo", "")
        .with("app/packages/mailer/mailer.jadpo", "")
        .with(
            "app/vendor/mailer/package.yaml",
            "package: mailer\nversion: 1.0.0\n",
        )
        .with("app/vendor/mailer/mailer.jadpo", "")
        .with("app/.git/hooks.jadpo", "")
        .with("app/lib/build/kept.jadpo", "")
}

fn source_paths(mem: &MemLoader) -> Vec<String> {
    let Ok(p) = load(mem, empty_bundled()) else {
        panic!("fatal")
    };
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    p.app_sources
        .iter()
        .map(|id| p.files.get(*id).path.clone())
        .collect()
}

#[test]
fn app_sources_skip_build_packages_and_package_folders() {
    assert_eq!(
        source_paths(&app()),
        [
            "alpha.jadpo",
            "lib/build/kept.jadpo",
            "src/a.jadpo",
            "src/billing/invoices.jadpo",
            "zeta.jadpo"
        ]
    );
}

#[test]
fn discovery_order_does_not_depend_on_listing_order() {
    let forward = app();
    let reversed = app().reversed();
    assert_eq!(source_paths(&forward), source_paths(&reversed));
    let ids = |mem: &MemLoader| {
        let Ok(p) = load(mem, empty_bundled()) else {
            panic!("fatal")
        };
        p.files
            .iter()
            .map(|(id, f)| (id, f.path.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&forward), ids(&reversed));
}

#[test]
fn invalid_utf8_is_reported_with_its_offset_and_skipped() {
    let mem = MemLoader::new()
        .with("app/jadpo.yaml", "app: shop\n")
        .with("app/good.jadpo", "")
        .with("app/bad.jadpo", b"// caf\xe9\n".to_vec());
    let result = load(&mem, empty_bundled());
    insta::assert_snapshot!(render_load(&result));
    let Ok(p) = result else { panic!("fatal") };
    let paths: Vec<_> = p
        .app_sources
        .iter()
        .map(|id| p.files.get(*id).path.as_str())
        .collect();
    assert_eq!(paths, ["good.jadpo"]);
}

#[test]
fn invalid_utf8_in_a_manifest_is_reported() {
    let mem = app_with_package("");
    let mem = mem.with(
        "app/vendor/mailer/package.yaml",
        b"package: mailer\nversion: \xff\n".to_vec(),
    );
    assert_eq!(codes(&load(&mem, empty_bundled())), ["load.invalid_utf8"]);
}

#[cfg(unix)]
#[test]
fn symlink_loops_on_disk_are_reported_once() {
    use jadpo_compiler::load::{load_project_with, FsLoader};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("load_symlink_loop");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    std::fs::write(dir.join("jadpo.yaml"), "app: shop\n").expect("write");
    std::fs::write(dir.join("src/a.jadpo"), "").expect("write");
    std::os::unix::fs::symlink("..", dir.join("src/up")).expect("symlink");
    let root = dir.to_str().expect("utf-8 path");
    let result = load_project_with(&FsLoader, root, empty_bundled());
    assert_eq!(codes(&result), ["load.symlink_loop"]);
    let Ok(p) = result else { panic!("fatal") };
    let paths: Vec<_> = p
        .app_sources
        .iter()
        .map(|id| p.files.get(*id).path.as_str())
        .collect();
    assert_eq!(paths, ["src/a.jadpo"]);
}

#[cfg(unix)]
#[test]
fn package_sources_cannot_link_outside_the_package() {
    use jadpo_compiler::load::{load_project_with, FsLoader};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("load_package_escape");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("packages/mailer")).expect("mkdir");
    std::fs::write(
        dir.join("jadpo.yaml"),
        "app: shop\npackages:\n  mailer: \"1\"\n",
    )
    .expect("write");
    std::fs::write(dir.join("secret.jadpo"), "").expect("write");
    std::fs::write(
        dir.join("packages/mailer/package.yaml"),
        "package: mailer\nversion: 1.0.0\n",
    )
    .expect("write");
    std::os::unix::fs::symlink(
        "../../secret.jadpo",
        dir.join("packages/mailer/stolen.jadpo"),
    )
    .expect("symlink");
    let root = dir.to_str().expect("utf-8 path");
    let result = load_project_with(&FsLoader, root, empty_bundled());
    assert_eq!(codes(&result), ["package.path_escapes"]);
}

/// A loader that counts the loads it is told of, around [`MemLoader`].
struct Counting {
    mem: MemLoader,
    open: std::sync::atomic::AtomicI32,
    begun: std::sync::atomic::AtomicI32,
}

impl jadpo_compiler::load::Loader for Counting {
    fn read(&self, path: &str) -> std::io::Result<Vec<u8>> {
        self.mem.read(path)
    }
    fn list(&self, path: &str) -> std::io::Result<Vec<(String, bool)>> {
        self.mem.list(path)
    }
    fn begin_load(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        self.open.fetch_add(1, SeqCst);
        self.begun.fetch_add(1, SeqCst);
    }
    fn end_load(&self) {
        self.open.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Every load tells the loader where it begins and ends, a failed one
/// included (a loader answers from what it asked at the start only
/// within the load).
#[test]
fn every_load_ends_what_it_began() {
    use std::sync::atomic::Ordering::SeqCst;
    for mem in [app(), MemLoader::new().with("app/zeta.jadpo", "")] {
        let counting = Counting {
            mem,
            open: Default::default(),
            begun: Default::default(),
        };
        let _ = jadpo_compiler::load::load_project_with(&counting, "app", empty_bundled());
        let _ = jadpo_compiler::load::load_package_unit(&counting, "app", None);
        assert_eq!(counting.begun.load(SeqCst), 2);
        assert_eq!(counting.open.load(SeqCst), 0);
    }
}
