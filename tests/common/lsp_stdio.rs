//! A `jadpo lsp` process for the language server tests: started in a
//! folder, spoken to with JSON-RPC framing on stdin, its messages read on a
//! thread (`lsp-server` does the framing) and handed over a channel. Every
//! wait is bounded, so a silent server fails the test instead of hanging it.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Instant;

pub struct Server {
    pub child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub fn start(cwd: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_jadpo"))
            .arg("lsp")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start jadpo lsp: {e}"));
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            incoming,
            next_id: 0,
        }
    }

    pub fn send(&mut self, message: &Value) {
        let body = message.to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.stdin
            .write_all(framed.as_bytes())
            .and_then(|()| self.stdin.flush())
            .expect("the server reads its stdin");
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request; returns its id, for the caller to wait for.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// The next message, waiting at most until `deadline`.
    pub fn next(&self, deadline: Instant, waiting_for: &str) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        self.incoming
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no answer from jadpo lsp while waiting for {waiting_for}"))
    }
}

/// Whether `message` answers request `id`; panics on an error answer.
pub fn answers(message: &Value, id: i64, method: &str) -> bool {
    let answer = message["id"] == json!(id) && message.get("method").is_none();
    assert!(
        !answer || message.get("error").is_none(),
        "{method} failed: {message}"
    );
    answer
}

/// The next message from the server, as JSON.
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let message = lsp_server::Message::read(reader).ok()??;
    serde_json::to_value(message).ok()
}

/// A `file://` URI, encoded independently of the server's encoder.
pub fn uri(path: &Path) -> String {
    let text = path.to_str().expect("UTF-8 temp path");
    let mut out = String::from("file://");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("temp folder");
    for entry in std::fs::read_dir(from).expect("app folder").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The capabilities of an editor that takes everything the server offers
/// (related information, Markdown hover, code action literals), as VS Code
/// and Neovim announce them.
pub fn editor_capabilities() -> Value {
    json!({ "textDocument": {
        "publishDiagnostics": { "relatedInformation": true },
        "hover": { "contentFormat": ["markdown", "plaintext"] },
        "codeAction": { "codeActionLiteralSupport": { "codeActionKind": { "valueSet": ["quickfix"] } } },
    } })
}
