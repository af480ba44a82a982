//! Moved from `src/load/package_unit.rs`.

use jadpo_compiler::load::package_unit::*;
use jadpo_compiler::load::MemLoader;

#[test]
fn a_folder_without_package_yaml_cannot_be_loaded() {
    let mem = MemLoader::new().with("pkg/a.jadpo", "type A = Text\n");
    let fatal = load_package_unit(&mem, "pkg", None).err();
    let codes: Vec<&str> = fatal
        .iter()
        .flat_map(|f| f.diagnostics.iter().map(|d| d.code))
        .collect();
    assert_eq!(codes, ["manifest.missing"]);
}

#[test]
fn folder_name_skips_trailing_slashes_and_dots() {
    assert_eq!(folder_name("packages/mailer/"), "mailer");
    assert_eq!(folder_name("."), "package");
}
