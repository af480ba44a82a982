//! `jadpo build`: the app checked, then its plan and bundle written to
//! `OUT` (by default `APP/build`), or, when the app has errors, nothing
//! written and a stale plan removed.

use super::{check_app, locate_app, say, Report};
use crate::check::Outcome;
use crate::cli::{BuildArgs, DiffFormat, Format};
use jadpo_checker::plan::Built as Plan;
use std::path::Path;

pub fn build(args: &BuildArgs) -> u8 {
    let dir = match locate_app(&args.path, "build") {
        Ok(dir) => dir,
        Err(status) => return status,
    };
    let outcome = check_app(&dir, true);
    let report = Report::of_app(&outcome, &dir);
    let json = args.format == DiffFormat::Json;
    if !json {
        report.print(
            Format::Human,
            args.color.color.enabled(),
            &report.app_closing(),
        );
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| format!("{}/build", dir.trim_end_matches('/')));
    let built = build_plan(&outcome, &dir, &out);
    if json {
        say(&report.json_with("build", built.to_json()));
    } else {
        built.say();
    }
    built.status()
}

/// What `jadpo build` did after the check.
#[derive(Debug, PartialEq)]
enum Built {
    /// The app could not be checked.
    CannotCheck,
    /// The app has errors: nothing written, and the plan an earlier build
    /// left is removed (named when there was one).
    Refused {
        removed: Option<String>,
    },
    Written {
        file: String,
        build_id: String,
    },
    WriteFailed {
        out: String,
        error: String,
    },
}

/// Writes the plan and bundle of the app checked in `outcome` (from the
/// folder `dir`) to `out`, when it has no errors.
fn build_plan(outcome: &Outcome, dir: &str, out: &str) -> Built {
    if outcome.program.is_none() {
        return Built::CannotCheck;
    }
    if outcome.has_errors() {
        return Built::Refused {
            removed: remove_stale_plan(out),
        };
    }
    let written = bundle_plan(outcome, dir, out)
        .and_then(|plan| write_plan(out, plan.as_ref()).map(|file| (file, plan)));
    match written {
        Ok((file, plan)) => Built::Written {
            file,
            build_id: match plan.as_ref() {
                Some(Plan::App(p)) => p.build_id.clone(),
                Some(Plan::Package(s)) => s.build_id.clone(),
                None => String::new(),
            },
        },
        Err(e) => Built::WriteFailed {
            out: out.to_string(),
            error: e.to_string(),
        },
    }
}

impl Built {
    fn status(&self) -> u8 {
        match self {
            Built::Written { .. } => 0,
            Built::Refused { .. } => 1,
            Built::CannotCheck | Built::WriteFailed { .. } => 2,
        }
    }

    fn say(&self) {
        match self {
            Built::CannotCheck => {}
            Built::Refused { removed } => {
                eprintln!("error: not writing a plan: the app has errors");
                if let Some(file) = removed {
                    eprintln!("note: removed the stale plan {file}");
                }
            }
            Built::Written { file, .. } => {
                let bundle = file.replace("plan.json", "app.bundle");
                if Path::new(&bundle).is_file() {
                    say(&format!("wrote {file} and {bundle}\n"))
                } else {
                    say(&format!("wrote {file}\n"))
                }
            }
            Built::WriteFailed { out, error } => {
                eprintln!("error: cannot write the plan to `{out}`: {error}");
            }
        }
    }

    fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Built::CannotCheck => json!({ "outcome": "cannot_check", "plan": null }),
            Built::Refused { removed } => {
                json!({ "outcome": "refused", "plan": null, "removed_stale_plan": removed })
            }
            Built::Written { file, build_id } => {
                json!({ "outcome": "written", "plan": file, "build_id": build_id })
            }
            Built::WriteFailed { error, .. } => {
                json!({ "outcome": "write_failed", "plan": null, "error": error })
            }
        }
    }
}

/// A plan left from an earlier build no longer matches the app: removed,
/// so it cannot be deployed by mistake (a link there is removed, not
/// followed). Returns the file removed.
fn remove_stale_plan(out: &str) -> Option<String> {
    let file = Path::new(out).join("plan.json");
    let removed = std::fs::symlink_metadata(&file).is_ok() && std::fs::remove_file(&file).is_ok();
    removed.then(|| file.display().to_string())
}

/// An app's plan with the checksum of its bundle, which is written to
/// `OUT/app.bundle`; a package's surface as it is.
fn bundle_plan(outcome: &Outcome, dir: &str, out: &str) -> std::io::Result<Option<Plan>> {
    let Some(Plan::App(plan)) = outcome.plan.as_ref() else {
        return Ok(outcome.plan.clone());
    };
    let bundle = crate::bundle::Bundle::of_app(&outcome.files, dir);
    crate::write::prepare_folder(Path::new(out))?;
    let file = format!("{}/app.bundle", out.trim_end_matches('/'));
    crate::write::write_atomic(Path::new(&file), bundle.to_json().as_bytes())
        .map_err(|e| std::io::Error::new(e.kind(), format!("`{file}`: {e}")))?;
    let mut plan = plan.clone();
    plan.bundle = bundle.checksum();
    plan.build_id = jadpo_checker::plan::build_id(&plan);
    Ok(Some(Plan::App(plan)))
}

/// Writes `plan` (JSON `null` for none) as `OUT/plan.json`, atomically,
/// and gives the file's path.
pub fn write_plan(out: &str, plan: Option<&Plan>) -> std::io::Result<String> {
    crate::write::prepare_folder(Path::new(out))?;
    let file = format!("{}/plan.json", out.trim_end_matches('/'));
    let json = plan.map_or(serde_json::Value::Null, |p| p.to_json());
    let mut text = serde_json::to_string_pretty(&json).map_err(std::io::Error::other)?;
    text.push('\n');
    crate::write::write_atomic(Path::new(&file), text.as_bytes())
        .map_err(|e| std::io::Error::new(e.kind(), format!("`{file}`: {e}")))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jadpo_compiler::load::MemLoader;

    fn outcome(source: &str) -> Outcome {
        let loader = MemLoader::new()
            .with("app/jadpo.yaml", "app: shop\n")
            .with("app/src/main.jadpo", source);
        crate::check::check_app(&loader, "app")
    }

    #[test]
    fn a_clean_app_writes_its_plan_and_bundle_with_the_bundles_checksum() {
        let dir = crate::write::scratch("build-clean");
        let out = dir.join("build").display().to_string();
        let built = build_plan(&outcome("action a() -> Unit {}\n"), "app", &out);
        let Built::Written { file, build_id } = &built else {
            panic!("{built:?}");
        };
        assert_eq!(built.status(), 0);
        let plan: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(file).expect("plan")).expect("JSON");
        assert_eq!(plan["build_id"].as_str(), Some(build_id.as_str()));
        assert!(dir.join("build/app.bundle").is_file());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_app_with_errors_writes_nothing_and_removes_the_stale_plan() {
        let dir = crate::write::scratch("build-refused");
        let out = dir.join("build").display().to_string();
        write_plan(&out, None).expect("a stale plan");
        let built = build_plan(&outcome("action a() -> Unit { nope() }\n"), "app", &out);
        let stale = dir.join("build/plan.json").display().to_string();
        assert_eq!(
            built,
            Built::Refused {
                removed: Some(stale)
            }
        );
        assert_eq!(built.status(), 1);
        assert!(!dir.join("build/plan.json").exists());
        assert!(!dir.join("build/app.bundle").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_stale_plan_that_is_a_link_is_removed_not_followed() {
        let dir = crate::write::scratch("build-link");
        let target = dir.join("keep.json");
        std::fs::write(&target, "keep").expect("target");
        std::fs::create_dir_all(dir.join("build")).expect("out");
        std::os::unix::fs::symlink(&target, dir.join("build/plan.json")).expect("link");
        assert!(remove_stale_plan(&dir.join("build").display().to_string()).is_some());
        assert_eq!(
            std::fs::read_to_string(&target).ok().as_deref(),
            Some("keep")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_out_path_that_is_a_file_is_a_write_failure_naming_it() {
        let dir = crate::write::scratch("build-blocked");
        let out = dir.join("build");
        std::fs::write(&out, "not a folder").expect("file");
        let built = build_plan(
            &outcome("action a() -> Unit {}\n"),
            "app",
            &out.display().to_string(),
        );
        assert!(matches!(built, Built::WriteFailed { .. }), "{built:?}");
        assert_eq!(built.status(), 2);
        assert_eq!(built.to_json()["outcome"], "write_failed");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
