//! `file://` URIs to paths and back. Only local files are served; other
//! schemes (untitled buffers, git views) are ignored by the server.

use lsp_types::Uri;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The local path of a `file://` URI, percent-decoded.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file://host/path` names another machine; only an empty host is local.
    let path = if rest.starts_with('/') {
        rest
    } else {
        rest.strip_prefix("localhost")?
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let decoded = decode(path)?;
    // Each spelling of one file (`..`, `.`, `//`) is one document and one
    // app, not a new entry per spelling.
    Some(PathBuf::from(crate::workspace::overlay::clean(&decoded)))
}

/// The `file://` URI of an absolute path.
pub fn from_path(path: &Path) -> Option<Uri> {
    let text = path.to_str()?;
    let mut out = String::from("file://");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&out).ok()
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_spelling_of_a_path_is_one_path() {
        let spellings = [
            "file:///app/src/a.jadpo",
            "file:///app/src/../src/a.jadpo",
            "file:///app/./src//a.jadpo",
            "file:///app/x/y/../../src/a.jadpo",
        ];
        for s in spellings {
            let uri = Uri::from_str(s).ok();
            let path = uri.as_ref().and_then(to_path);
            assert_eq!(path.as_deref(), Some(Path::new("/app/src/a.jadpo")), "{s}");
        }
    }

    #[test]
    fn round_trips_spaces_and_unicode() {
        let path = Path::new("/tmp/my app/été.jadpo");
        let uri = from_path(path);
        assert!(uri.is_some());
        let back = uri.as_ref().and_then(to_path);
        assert_eq!(back.as_deref(), Some(path));
        let plain = Uri::from_str("file:///a/b%20c.jadpo").ok();
        assert_eq!(
            plain.as_ref().and_then(to_path),
            Some(PathBuf::from("/a/b c.jadpo"))
        );
        let untitled = Uri::from_str("untitled:Untitled-1").ok();
        assert_eq!(untitled.as_ref().and_then(to_path), None);
    }
}
