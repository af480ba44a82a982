//! Moved from `src/load/loaders.rs`.

use jadpo_compiler::load::loaders::*;
use jadpo_compiler::load::Loader;

#[test]
fn normalize_folds_dots() {
    assert_eq!(normalize_relative("a/./b/../c").as_deref(), Some("a/c"));
    assert_eq!(normalize_relative("../x").as_deref(), Some("../x"));
    assert_eq!(normalize_relative("a/../../x").as_deref(), Some("../x"));
    assert_eq!(normalize_relative("/etc"), None);
    assert_eq!(
        normalize_shown("/tmp/x/app/../shared/mailer"),
        "/tmp/x/shared/mailer"
    );
    assert_eq!(normalize_shown("/a/./b/../../../c"), "/c");
    assert_eq!(normalize_shown("/.."), "/");
    assert_eq!(normalize_shown("/../..foo/x"), "/..foo/x");
    assert_eq!(normalize_shown("//srv/app"), "/srv/app");
    assert_eq!(normalize_shown("app/../shared"), "shared");
    assert_eq!(normalize_shown("C:\\app\\..\\x"), "C:\\app\\..\\x");
    assert!(escapes("../x"));
    assert!(!escapes("..x/y"));
}

#[test]
fn mem_lists_children() {
    let mem = MemLoader::new()
        .with("app/jadpo.yaml", "app: x")
        .with("app/src/a.jadpo", "")
        .with("other/b", "");
    let list = mem.list("app").unwrap_or_default();
    assert_eq!(
        list,
        vec![("jadpo.yaml".to_string(), false), ("src".to_string(), true)]
    );
    assert!(mem.list("missing").is_err());
}
