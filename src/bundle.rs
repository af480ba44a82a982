//! The app bundle (design `server.md` section 13): what `jadpo build`
//! writes beside the plan so deployments run bundles, never working
//! trees: the app's sources and manifests (local packages included; the
//! bundled packages and the standard library come with the binary), each
//! with its BLAKE3 checksum, and one checksum over all of them that the
//! plan carries, so the build id covers the sources.

use std::path::Path;

use jadpo_compiler::load::loaders::MemLoader;
use jadpo_compiler::source::Files;
use serde_json::json;

/// The format `app.bundle` is written in.
pub const BUNDLE_FORMAT: u64 = 1;
/// The largest bundle read back.
pub const MAX_BUNDLE_BYTES: u64 = 64 * 1024 * 1024;

/// Files by path (relative to the app's folder, `/`-separated), sorted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    pub files: Vec<(String, String)>,
}

impl Bundle {
    /// The app's own files among those a check read.
    pub fn of_app(files: &Files, dir: &str) -> Bundle {
        let mut out: Vec<(String, String)> = files
            .iter()
            .map(|(_, f)| (f.path.clone(), f.text.to_string()))
            .filter(|(p, _)| {
                !p.starts_with('<') && !p.starts_with('/') && !p.split('/').any(|s| s == "..")
            })
            .collect();
        if !out.iter().any(|(p, _)| p == "jadpo.yaml") {
            if let Ok(text) = std::fs::read_to_string(Path::new(dir).join("jadpo.yaml")) {
                out.push(("jadpo.yaml".into(), text));
            }
        }
        out.sort();
        out.dedup_by(|a, b| a.0 == b.0);
        Bundle { files: out }
    }

    /// One checksum over every path and text, in order.
    pub fn checksum(&self) -> String {
        let mut h = blake3::Hasher::new_derive_key("jadpo-bundle-v1");
        for (path, text) in &self.files {
            h.update(&(path.len() as u64).to_le_bytes());
            h.update(path.as_bytes());
            h.update(&(text.len() as u64).to_le_bytes());
            h.update(text.as_bytes());
        }
        h.finalize().to_hex().to_string()
    }

    pub fn to_json(&self) -> String {
        let files: Vec<serde_json::Value> = self
            .files
            .iter()
            .map(|(path, text)| {
                json!({
                    "path": path,
                    "blake3": blake3::hash(text.as_bytes()).to_hex().to_string(),
                    "text": text,
                })
            })
            .collect();
        let doc = json!({
            "bundle_format": BUNDLE_FORMAT,
            "checksum": self.checksum(),
            "files": files,
        });
        let mut text = doc.to_string();
        text.push('\n');
        text
    }

    /// Reads `app.bundle`, checking every file's checksum and the whole.
    pub fn read(path: &Path) -> Result<Bundle, String> {
        let meta =
            std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if !meta.is_file() {
            return Err(format!("{} is not a file", path.display()));
        }
        if meta.len() > MAX_BUNDLE_BYTES {
            return Err(format!("{} is larger than 64 MiB", path.display()));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let doc: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a bundle ({e})", path.display()))?;
        if doc["bundle_format"].as_u64() != Some(BUNDLE_FORMAT) {
            return Err(format!(
                "{} is not a bundle of format {BUNDLE_FORMAT}",
                path.display()
            ));
        }
        let mut files = Vec::new();
        for f in doc["files"].as_array().into_iter().flatten() {
            let (Some(p), Some(sum), Some(t)) =
                (f["path"].as_str(), f["blake3"].as_str(), f["text"].as_str())
            else {
                return Err(format!(
                    "{}: a file entry lacks path, blake3 or text",
                    path.display()
                ));
            };
            if blake3::hash(t.as_bytes()).to_hex().as_str() != sum {
                return Err(format!(
                    "{}: `{p}` does not match its checksum",
                    path.display()
                ));
            }
            if p.starts_with('/') || p.split('/').any(|s| s == "..") {
                return Err(format!("{}: `{p}` is outside the app", path.display()));
            }
            files.push((p.to_string(), t.to_string()));
        }
        files.sort();
        let bundle = Bundle { files };
        if doc["checksum"].as_str() != Some(bundle.checksum().as_str()) {
            return Err(format!(
                "{}: the bundle does not match its checksum",
                path.display()
            ));
        }
        Ok(bundle)
    }

    /// The bundle as an app at `app/`.
    pub fn loader(&self) -> MemLoader {
        let mut m = MemLoader::new();
        for (path, text) in &self.files {
            m.insert(format!("app/{path}"), text.as_bytes());
        }
        m
    }
}
