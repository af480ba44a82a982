//! `jadpo new PATH`: a new app that checks clean and whose test passes, so
//! a newcomer starts from working code: `jadpo.yaml`, the application with
//! its store and steps key, one route, one subscriber, one test and a
//! `.gitignore` for `build/`. The app is named after the folder.

use std::path::Path;

const APP: &str = include_str!("app.jadpo.in");
const NOTES: &str = include_str!("notes.jadpo.in");
const NOTES_TEST: &str = include_str!("notes_test.jadpo.in");

/// Creates the app; returns what went wrong, in words.
pub fn create(path: &str) -> Result<String, String> {
    let dir = Path::new(path);
    let name = app_name(dir)?;
    if std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(format!(
            "`{path}` is not empty; `jadpo new` makes an app in a new or empty folder"
        ));
    }
    let application = pascal(&name);
    let files = [
        ("jadpo.yaml", format!("app: {}\n", yaml_text(&name))),
        (".gitignore", "build/\n".to_string()),
        ("src/app.jadpo", APP.replace("{Application}", &application)),
        ("src/notes.jadpo", NOTES.to_string()),
        ("tests/notes.jadpo", NOTES_TEST.to_string()),
    ];
    for (rel, text) in &files {
        let file = dir.join(rel);
        let folder = file.parent().unwrap_or(dir);
        crate::write::prepare_folder(folder)
            .and_then(|()| crate::write::write_atomic(&file, text.as_bytes()))
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    }
    Ok(name)
}

/// The folder's own name, which must be an app name (`lower_snake_case`,
/// as `jadpo.yaml` requires).
fn app_name(dir: &Path) -> Result<String, String> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        Ok(name)
    } else {
        Err(format!(
            "`{}` cannot name an app: an app name is lowercase letters, digits and `_`, starting with a letter (e.g. `jadpo new my_notes`)",
            dir.display()
        ))
    }
}

/// The name as a YAML scalar that reads back as text: quoted when YAML
/// would read the bare word as something else (`true`, `null`, `no`).
fn yaml_text(name: &str) -> String {
    const NOT_TEXT: [&str; 9] = ["true", "false", "null", "yes", "no", "on", "off", "y", "n"];
    if NOT_TEXT.contains(&name) {
        format!("\"{name}\"")
    } else {
        name.to_string()
    }
}

/// `my_notes` -> `MyNotes`.
fn pascal(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_yaml_reads_otherwise_are_quoted() {
        assert_eq!(yaml_text("true"), "\"true\"");
        assert_eq!(yaml_text("null"), "\"null\"");
        assert_eq!(yaml_text("notes"), "notes");
    }

    #[test]
    fn names_become_application_names() {
        assert_eq!(pascal("my_notes"), "MyNotes");
        assert!(app_name(Path::new("/tmp/my-notes")).is_err());
        assert_eq!(pascal("shop_2"), "Shop2");
        assert!(app_name(Path::new("/tmp/Bad Name")).is_err());
        assert!(app_name(Path::new("/tmp/9lives")).is_err());
        assert_eq!(app_name(Path::new("apps/notes")), Ok("notes".to_string()));
    }
}
