//! `jadpo lsp` end to end: drives the built binary over stdio with
//! JSON-RPC framing as an editor does, on a temporary copy of the billing
//! example. Every wait is bounded, so a silent server fails the test
//! instead of hanging it.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(60);

#[path = "common/lsp_stdio.rs"]
pub(crate) mod lsp_stdio;

use lsp_stdio::{answers, copy_dir, editor_capabilities, uri, Server};

struct Client {
    server: Server,
    /// Notifications read while waiting for something else.
    pending: Vec<Value>,
}

impl Client {
    fn start(cwd: &Path) -> Client {
        Client {
            server: Server::start(cwd),
            pending: Vec::new(),
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.server.notify(method, params);
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.server.send_request(method, params);
        let deadline = Instant::now() + WAIT;
        loop {
            let message = self.server.next(deadline, method);
            if answers(&message, id, method) {
                return message["result"].clone();
            }
            self.pending.push(message);
        }
    }

    /// The next diagnostics published for a file ending with `suffix`.
    fn diagnostics(&mut self, suffix: &str) -> Vec<Value> {
        let matches = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"]
                    .as_str()
                    .is_some_and(|u| u.ends_with(suffix))
        };
        if let Some(i) = self.pending.iter().position(matches) {
            let found = self.pending.remove(i);
            return list(&found["params"]["diagnostics"]);
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let message = self.server.next(deadline, suffix);
            if matches(&message) {
                return list(&message["params"]["diagnostics"]);
            }
            self.pending.push(message);
        }
    }
}

fn list(value: &Value) -> Vec<Value> {
    value.as_array().cloned().unwrap_or_default()
}

/// A fresh copy of `examples/billing` in the temporary folder.
fn billing_copy(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jadpo-lsp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/billing"),
        &dir,
    );
    dir
}

/// The 0-based line and UTF-16 column of the first `needle` in `text`.
fn position_of(text: &str, needle: &str) -> Value {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` is in the text"));
    let before = &text[..at];
    let line = before.matches('\n').count();
    let column: usize = before
        .rsplit('\n')
        .next()
        .unwrap_or("")
        .chars()
        .map(char::len_utf16)
        .sum();
    json!({ "line": line, "character": column })
}

fn doc(path: &Path) -> Value {
    json!({ "uri": uri(path) })
}

fn at(path: &Path, text: &str, needle: &str) -> Value {
    json!({ "textDocument": doc(path), "position": position_of(text, needle) })
}

fn code_of(d: &Value) -> &str {
    d["code"].as_str().unwrap_or("")
}

#[test]
fn an_editor_session() {
    let app = billing_copy("session");
    let model = app.join("src/model.jadpo");
    let good_model = std::fs::read_to_string(&model)
        .expect("model.jadpo")
        .replace(
            "failure ChargeUnknown {\n    kind: NotFound\n    code: \"charge_unknown\"\n}",
            "failure ChargeUnknown { code: \"😀☕\" kind: NotFound }",
        );
    std::fs::write(&model, &good_model).expect("write model");
    let mut client = Client::start(&app);

    let init = client.request(
        "initialize",
        json!({ "processId": null, "rootUri": uri(&app), "capabilities": editor_capabilities() }),
    );
    let caps = &init["capabilities"];
    assert_eq!(
        caps["textDocumentSync"]["change"], 2,
        "incremental sync: {caps}"
    );
    for cap in [
        "hoverProvider",
        "definitionProvider",
        "referencesProvider",
        "documentSymbolProvider",
        "codeActionProvider",
    ] {
        assert_eq!(caps[cap], true, "{cap} in {caps}");
    }
    client.notify("initialized", json!({}));

    // Unsaved text with a mistake after non-ASCII characters on its line.
    let broken = good_model.replace("kind: NotFound }", "kind: NotFund }");
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(&model), "languageId": "jadpo", "version": 1, "text": broken } }),
    );
    let found = client.diagnostics("src/model.jadpo");
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &found[0];
    assert_eq!(code_of(d), "failure.unknown_kind");
    assert_eq!(d["severity"], 1);
    let message = d["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("`NotFund` is not a standard failure kind"),
        "{message}"
    );
    // UTF-16 columns: 😀 counts 2, ☕ counts 1.
    let start = position_of(&broken, "NotFund");
    assert_eq!(d["range"]["start"], start);

    // Fix it with a range edit in UTF-16 columns.
    let mut end = start.clone();
    end["character"] = json!(start["character"].as_u64().unwrap_or(0) + "NotFund".len() as u64);
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": uri(&model), "version": 2 },
            "contentChanges": [ { "range": { "start": start, "end": end }, "text": "NotFound" } ]
        }),
    );
    assert_eq!(client.diagnostics("src/model.jadpo"), Vec::<Value>::new());

    // A missing failure in `fails`: the resolver's fix is a quick fix.
    let payments = app.join("src/payments.jadpo");
    let payments_text = std::fs::read_to_string(&payments).expect("payments.jadpo");
    let missing = payments_text.replace(
        "(request: CancelRequest) fails stripe.ResourceMissing -> Unit",
        "(request: CancelRequest) -> Unit",
    );
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(&payments), "languageId": "jadpo", "version": 1, "text": missing } }),
    );
    let found = client.diagnostics("src/payments.jadpo");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(code_of(&found[0]), "failure.missing_in_fails");
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": doc(&payments),
            "range": found[0]["range"],
            "context": { "diagnostics": found }
        }),
    );
    let fix = list(&actions)
        .into_iter()
        .find(|a| a["title"] == "add `stripe.ResourceMissing` to `fails`")
        .unwrap_or_else(|| panic!("a quick fix adding the failure: {actions}"));
    assert_eq!(fix["kind"], "quickfix");
    let edits = list(&fix["edit"]["changes"][uri(&payments)]);
    assert_eq!(edits.len(), 1, "{fix}");
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": uri(&payments), "version": 2 },
            "contentChanges": [ { "range": edits[0]["range"], "text": edits[0]["newText"] } ]
        }),
    );
    assert_eq!(
        client.diagnostics("src/payments.jadpo"),
        Vec::<Value>::new()
    );

    // Hover on an outside call: its step number and the operation's facts.
    let subscribe = app.join("src/subscribe.jadpo");
    let text = std::fs::read_to_string(&subscribe).expect("subscribe.jadpo");
    let hover = client.request(
        "textDocument/hover",
        at(&subscribe, &text, "customers.create"),
    );
    let shown = hover["contents"]["value"].as_str().unwrap_or("");
    assert!(
        shown.contains("step 1 of at most 3 in `subscribe`"),
        "{shown}"
    );
    assert!(
        shown.contains("keyed: yes (`Idempotency-Key`, provider window 24h)"),
        "{shown}"
    );
    assert!(shown.contains("timeout 5s x 2 attempts"), "{shown}");
    let hover = client.request(
        "textDocument/hover",
        at(&subscribe, &text, "prices.retrieve"),
    );
    let shown = hover["contents"]["value"].as_str().unwrap_or("");
    assert!(shown.contains("not a step of `subscribe`"), "{shown}");

    // Hover on an action's name: its changing calls and who reaches it.
    let hover = client.request(
        "textDocument/hover",
        at(&subscribe, &text, "subscribe(request"),
    );
    let shown = hover["contents"]["value"].as_str().unwrap_or("");
    assert!(shown.contains("changing calls: 3"), "{shown}");
    assert!(shown.contains("`route POST /subscriptions`"), "{shown}");
    assert!(shown.contains("step shape digest"), "{shown}");

    // Go to definition: an entry's action, and an operation's manifest entry.
    let entries = app.join("src/entries.jadpo");
    let entries_text = std::fs::read_to_string(&entries).expect("entries.jadpo");
    let target = client.request(
        "textDocument/definition",
        at(&entries, &entries_text, "subscribe(input)"),
    );
    assert_eq!(target["uri"], uri(&subscribe), "{target}");
    assert_eq!(
        target["range"]["start"],
        position_of(&text, "subscribe(request")
    );
    let target = client.request(
        "textDocument/definition",
        at(&subscribe, &text, "customers.create"),
    );
    let manifest = target["uri"].as_str().unwrap_or("");
    assert!(manifest.ends_with("stripe/package.yaml"), "{target}");

    // Find references of an action: the route that runs it.
    let refs = client.request(
        "textDocument/references",
        json!({
            "textDocument": doc(&subscribe),
            "position": position_of(&text, "subscribe(request"),
            "context": { "includeDeclaration": false }
        }),
    );
    let refs = list(&refs);
    assert_eq!(refs.len(), 1, "{refs:?}");
    assert_eq!(refs[0]["uri"], uri(&entries));

    // The outline of a file.
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": doc(&subscribe) }),
    );
    let names: Vec<String> = list(&symbols)
        .iter()
        .filter_map(|s| s["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        names,
        ["subscribe", "subscribe_requested", "request_subscription"]
    );

    // Shut down and exit cleanly, within the bound.
    let answer = client.request("shutdown", Value::Null);
    assert_eq!(answer, Value::Null);
    client.notify("exit", Value::Null);
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Ok(Some(status)) = client.server.child.try_wait() {
            break status;
        }
        assert!(Instant::now() < deadline, "jadpo lsp did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit status {status}");
    let _ = std::fs::remove_dir_all(&app);
}

/// Sends a code action's edits for one file back as a `didChange`, as an
/// editor applying the fix does.
fn apply(client: &mut Client, path: &Path, action: &Value, version: u32) {
    let edits = list(&action["edit"]["changes"][uri(path)]);
    assert!(!edits.is_empty(), "edits for {}: {action}", path.display());
    // Later edits first, so earlier positions stay valid.
    let mut changes: Vec<Value> = edits
        .iter()
        .map(|e| json!({ "range": e["range"], "text": e["newText"] }))
        .collect();
    changes.reverse();
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(path), "version": version }, "contentChanges": changes }),
    );
}

fn open(client: &mut Client, path: &Path, text: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(path), "languageId": "jadpo", "version": 1, "text": text } }),
    );
}

fn action_titled(client: &mut Client, path: &Path, d: &Value, title: &str) -> Value {
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": doc(path), "range": d["range"], "context": { "diagnostics": [d] } }),
    );
    list(&actions)
        .into_iter()
        .find(|a| a["title"].as_str().is_some_and(|t| t.starts_with(title)))
        .unwrap_or_else(|| panic!("a code action `{title}`: {actions}"))
}

#[test]
fn constructed_fixes_and_manifests() {
    let app = billing_copy("fixes");
    let mut client = Client::start(&app);
    client.request(
        "initialize",
        json!({ "processId": null, "capabilities": editor_capabilities() }),
    );
    client.notify("initialized", json!({}));

    // A route running a multi-step action without the key: the quick fix
    // adds `idempotency_key: required`.
    let entries = app.join("src/entries.jadpo");
    let text = std::fs::read_to_string(&entries).expect("entries.jadpo");
    let unkeyed = text.replacen(
        "    idempotency_key: required // the route's API requires Idempotency-Key\n",
        "",
        1,
    );
    assert_ne!(unkeyed, text);
    open(&mut client, &entries, &unkeyed);
    let found = client.diagnostics("src/entries.jadpo");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(code_of(&found[0]), "step.context");
    let fix = action_titled(&mut client, &entries, &found[0], "require Idempotency-Key");
    apply(&mut client, &entries, &fix, 2);
    assert_eq!(client.diagnostics("src/entries.jadpo"), Vec::<Value>::new());

    // A warning declined for its action, with a reason placeholder.
    let subscribe = app.join("src/subscribe.jadpo");
    let text = std::fs::read_to_string(&subscribe).expect("subscribe.jadpo");
    let first_decline = text
        .lines()
        .find(|l| l.starts_with("decline step.late_failure"))
        .expect("a decline line");
    let undeclined = text.replacen(&format!("{first_decline}\n"), "", 1);
    open(&mut client, &subscribe, &undeclined);
    let found = client.diagnostics("src/subscribe.jadpo");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(code_of(&found[0]), "step.late_failure");
    assert_eq!(found[0]["severity"], 2);
    let fix = action_titled(
        &mut client,
        &subscribe,
        &found[0],
        "decline `step.late_failure`",
    );
    let edits = list(&fix["edit"]["changes"][uri(&subscribe)]);
    assert_eq!(
        edits[0]["newText"],
        "decline step.late_failure \"reason\"\n"
    );
    assert_eq!(
        edits[0]["range"]["start"],
        position_of(&undeclined, "action subscribe(")
    );
    apply(&mut client, &subscribe, &fix, 2);
    assert_eq!(
        client.diagnostics("src/subscribe.jadpo"),
        Vec::<Value>::new()
    );

    // `jadpo.yaml`: a requirement that cannot be found, then unreadable YAML
    // (nothing can be checked), then fixed.
    let manifest = app.join("jadpo.yaml");
    let good = std::fs::read_to_string(&manifest).expect("jadpo.yaml");
    open(
        &mut client,
        &manifest,
        &format!("{good}  nosuchpkg: \"1\"\n"),
    );
    let found = client.diagnostics("jadpo.yaml");
    assert!(!found.is_empty());
    assert!(code_of(&found[0]).starts_with("package."), "{found:?}");
    let all =
        json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 99, "character": 0 } });
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(&manifest), "version": 2 }, "contentChanges": [ { "range": all, "text": "app: [\n" } ] }),
    );
    let found = client.diagnostics("jadpo.yaml");
    assert_eq!(found.len(), 1, "{found:?}");
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(&manifest), "version": 3 }, "contentChanges": [ { "text": good } ] }),
    );
    assert_eq!(client.diagnostics("jadpo.yaml"), Vec::<Value>::new());

    client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    let _ = std::fs::remove_dir_all(&app);
}

#[test]
fn local_package_manifest_findings_show_in_package_yaml() {
    let app = billing_copy("package");
    let pkg = app.join("packages/shop");
    std::fs::create_dir_all(&pkg).expect("package folder");
    let manifest = "package: shop\nversion: 1.0.0\nprovider:\n  timeout: 5s\n  attempts: 2\noperations:\n  items.get:\n    request: Text\n    answer: Text\n    changes: false\n";
    std::fs::write(pkg.join("package.yaml"), manifest).expect("package.yaml");
    let jadpo_yaml = app.join("jadpo.yaml");
    let requirement = format!(
        "{}  shop: \"1\"\n",
        std::fs::read_to_string(&jadpo_yaml).expect("jadpo.yaml")
    );
    std::fs::write(&jadpo_yaml, requirement).expect("jadpo.yaml");
    let mut client = Client::start(&app);
    client.request(
        "initialize",
        json!({ "processId": null, "capabilities": editor_capabilities() }),
    );
    client.notify("initialized", json!({}));
    let yaml = pkg.join("package.yaml");
    open(
        &mut client,
        &yaml,
        &manifest.replace("timeout: 5s", "timeout: 5 parsecs"),
    );
    // The package is the author's own (inside the app's folder): its
    // finding shows in its manifest, not folded into `package.has_errors`.
    let found = client.diagnostics("packages/shop/package.yaml");
    assert!(
        found.iter().any(|d| code_of(d) == "manifest.bad_duration"),
        "the package's own finding shows in its manifest: {found:?}"
    );
    let folded = client.pending.iter().any(|m| {
        list(&m["params"]["diagnostics"])
            .iter()
            .any(|d| code_of(d) == "package.has_errors")
    });
    assert!(!folded, "a local package's errors are not folded");
    client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    let _ = std::fs::remove_dir_all(&app);
}

/// An edit to a called action changes findings in a file that was not
/// edited (the server reuses the summaries of unchanged actions, and must
/// not reuse the edited one's or its callers'), and undoing it clears them.
#[test]
fn an_edit_reaches_callers_in_other_files() {
    let app = billing_copy("callers");
    let mut client = Client::start(&app);
    client.request(
        "initialize",
        json!({ "processId": null, "capabilities": editor_capabilities() }),
    );
    client.notify("initialized", json!({}));
    let payments = app.join("src/payments.jadpo");
    let text = std::fs::read_to_string(&payments).expect("payments.jadpo");
    let call = "    return attempt stripe.invoices.list(stripe.InvoiceQuery { customer: request.customer })\n";
    assert!(text.contains(call), "list_invoices in payments.jadpo");
    // A second 30s x 1 attempt call: 60s, past the route's 35s deadline.
    let twice = call.replacen("return ", "var first = ", 1);
    open(
        &mut client,
        &payments,
        &text.replacen(call, &format!("{twice}{call}"), 1),
    );
    let found = client.diagnostics("src/entries.jadpo");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(code_of(&found[0]), "route.calls_past_deadline");
    // Undone as an editor sends it: the whole text replaced.
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(&payments), "version": 2 }, "contentChanges": [{ "text": text }] }),
    );
    assert_eq!(client.diagnostics("src/entries.jadpo"), Vec::<Value>::new());
    client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    let _ = std::fs::remove_dir_all(&app);
}

/// Files and manifests changed on disk behind the editor's back show in
/// the next analysis, although the server keeps what it read from disk
/// (files and folder listings, by their times) and parsed manifests (by
/// their text): a file created in a new folder, a `package.yaml` rewritten
/// with the same length, a file renamed and removed.
#[test]
fn disk_changes_show_in_the_next_analysis() {
    let app = billing_copy("disk");
    let pkg = app.join("packages/shop");
    std::fs::create_dir_all(&pkg).expect("package folder");
    let manifest = "package: shop\nversion: 1.0.0\nprovider:\n  timeout: 5s\n  attempts: 2\noperations:\n  items.get:\n    request: Text\n    answer: Text\n    changes: false\n";
    let yaml = pkg.join("package.yaml");
    std::fs::write(&yaml, manifest).expect("package.yaml");
    let jadpo_yaml = app.join("jadpo.yaml");
    let requirement = format!(
        "{}  shop: \"1\"\n",
        std::fs::read_to_string(&jadpo_yaml).expect("jadpo.yaml")
    );
    std::fs::write(&jadpo_yaml, requirement).expect("jadpo.yaml");
    // Copies of what was changed in the last 3 seconds are not kept (a
    // change in the same clock tick would not show in the file's times).
    std::thread::sleep(Duration::from_millis(3500));
    let mut client = Client::start(&app);
    client.request(
        "initialize",
        json!({ "processId": null, "capabilities": editor_capabilities() }),
    );
    client.notify("initialized", json!({}));
    let payments = app.join("src/payments.jadpo");
    let text = std::fs::read_to_string(&payments).expect("payments.jadpo");
    open(&mut client, &payments, &text);
    assert_eq!(
        client.diagnostics("src/payments.jadpo"),
        Vec::<Value>::new()
    );
    let mut version = 1;
    let mut edit = |client: &mut Client| {
        version += 1;
        client.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri(&payments), "version": version }, "contentChanges": [{ "text": text }] }),
        );
    };

    std::fs::create_dir_all(app.join("src/extra")).expect("folder");
    let broken = app.join("src/extra/broken.jadpo");
    std::fs::write(&broken, "action broken( -> Unit {}\n").expect("write");
    edit(&mut client);
    let found = client.diagnostics("src/extra/broken.jadpo");
    assert!(!found.is_empty(), "the new file is checked");

    let moved = app.join("src/extra/moved.jadpo");
    std::fs::rename(&broken, &moved).expect("rename");
    edit(&mut client);
    assert!(!client.diagnostics("src/extra/moved.jadpo").is_empty());
    assert_eq!(
        client.diagnostics("src/extra/broken.jadpo"),
        Vec::<Value>::new()
    );
    std::fs::remove_file(&moved).expect("remove");
    edit(&mut client);
    assert_eq!(
        client.diagnostics("src/extra/moved.jadpo"),
        Vec::<Value>::new()
    );

    let bad = manifest.replace("timeout: 5s", "timeout: 5x");
    assert_eq!(bad.len(), manifest.len());
    std::fs::write(&yaml, &bad).expect("package.yaml");
    edit(&mut client);
    let in_package = client.diagnostics("packages/shop/package.yaml");
    assert!(
        in_package
            .iter()
            .any(|d| code_of(d) == "manifest.bad_duration"),
        "{in_package:?}"
    );
    std::fs::write(&yaml, manifest).expect("package.yaml");
    edit(&mut client);
    assert_eq!(
        client.diagnostics("packages/shop/package.yaml"),
        Vec::<Value>::new()
    );
    client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    let _ = std::fs::remove_dir_all(&app);
}

/// Runs `jadpo lsp` on raw bytes (stdin closed after them); returns the
/// exit status, stdout and stderr. The server is killed after 20 s.
fn lsp_on_bytes(input: &[u8]) -> (Option<i32>, String, String) {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start jadpo lsp: {e}"));
    let mut stdin = child.stdin.take().expect("piped");
    let _ = stdin.write_all(input);
    drop(stdin);
    let started = std::time::Instant::now();
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status.code();
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut out = String::new();
    let mut err = String::new();
    let _ = child.stdout.take().map(|mut s| s.read_to_string(&mut out));
    let _ = child.stderr.take().map(|mut s| s.read_to_string(&mut err));
    (status, out, err)
}

fn framed(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// The framing once trusted `Content-Length` (3 GB reserved 3 GB, 10 GB
/// aborted) and exited 1 silently on a broken frame.
#[test]
fn broken_framing_is_bounded_and_explained() {
    let (status, _, err) = lsp_on_bytes(b"Content-Length: 10000000000\r\n\r\n");
    assert!(matches!(status, Some(1 | 2)), "{status:?} {err}");
    assert!(err.contains("over the limit"), "{err}");

    let (status, _, err) = lsp_on_bytes(&vec![b'x'; 100_000]);
    assert!(matches!(status, Some(1 | 2)), "{status:?} {err}");
    assert!(err.contains("header line is longer"), "{err}");

    let init =
        framed(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#);
    let initialized = framed(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
    let input = format!(
        "{init}{initialized}{}Content-Length: 50\r\n\r\n{{",
        framed("not json")
    );
    let (status, out, err) = lsp_on_bytes(input.as_bytes());
    assert_eq!(status, Some(1), "{err}");
    assert!(out.contains("-32700"), "a ParseError reply: {out}");
    assert!(err.contains("ended inside a message"), "{err}");
}

/// A `didChange` for a document never opened once read its path with no
/// file-type or size check: `/dev/zero` grew without end, a pipe blocked
/// the loop. Now such a change is ignored and the server keeps answering.
#[test]
fn a_change_to_a_device_never_opened_is_ignored() {
    let messages = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///dev/zero","version":2},"contentChanges":[{"text":"x"}]}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///dev/zero"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","method":"exit"}"#,
    ];
    let input: String = messages.iter().map(|m| framed(m)).collect();
    let (status, out, err) = lsp_on_bytes(input.as_bytes());
    assert_eq!(status, Some(0), "{err}");
    assert!(
        out.contains(r#""id":2"#),
        "the next request was answered: {out}"
    );
    assert!(err.contains("ignoring a change to /dev/zero"), "{err}");
}

/// The protocol's lifecycle: requests before `initialize` get
/// ServerNotInitialized, `initialize` names the server, a second one and
/// any request after `shutdown` get InvalidRequest, and `exit` after
/// `shutdown` is a clean exit; `exit` before `initialize` is status 1.
#[test]
fn the_lifecycle_follows_the_protocol() {
    let messages = [
        r#"{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"exit"}"#,
    ];
    let input: String = messages.iter().map(|m| framed(m)).collect();
    let (status, out, err) = lsp_on_bytes(input.as_bytes());
    assert_eq!(status, Some(0), "{err}");
    let replies: Vec<serde_json::Value> = out
        .split("Content-Length:")
        .filter_map(|part| part.split_once("\r\n\r\n"))
        .filter_map(|(_, body)| serde_json::from_str(body).ok())
        .collect();
    let reply = |id: i64| {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no reply to {id}: {out}"))
    };
    assert_eq!(reply(7)["error"]["code"], -32002);
    assert_eq!(reply(1)["result"]["serverInfo"]["name"], "jadpo");
    assert_eq!(reply(2)["error"]["code"], -32600);
    assert!(reply(3)["result"].is_null(), "{out}");
    assert_eq!(reply(4)["error"]["code"], -32600);

    let exit_first = framed(r#"{"jsonrpc":"2.0","method":"exit"}"#);
    let (status, _, err) = lsp_on_bytes(exit_first.as_bytes());
    assert_eq!(status, Some(1), "{err}");
    assert!(err.contains("before `initialize`"), "{err}");
}

/// Applies LSP text edits (line/UTF-16 positions; ASCII text here).
fn apply_edits(text: &str, edits: &[Value]) -> String {
    let offset = |pos: &Value| {
        let line = pos["line"].as_u64().unwrap_or(0) as usize;
        let col = pos["character"].as_u64().unwrap_or(0) as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        start + col
    };
    let mut out = text.to_string();
    let mut sorted: Vec<&Value> = edits.iter().collect();
    sorted.sort_by_key(|e| std::cmp::Reverse(offset(&e["range"]["start"])));
    for e in sorted {
        let (a, b) = (offset(&e["range"]["start"]), offset(&e["range"]["end"]));
        out.replace_range(a..b, e["newText"].as_str().unwrap_or(""));
    }
    out
}

#[test]
fn formatting_an_open_document_gives_the_fmt_layout() {
    let app = billing_copy("formatting");
    let mut client = Client::start(&app);
    let init = client.request(
        "initialize",
        json!({ "processId": null, "capabilities": editor_capabilities() }),
    );
    assert_eq!(init["capabilities"]["documentFormattingProvider"], true);
    client.notify("initialized", json!({}));
    let file = app.join("src/payments.jadpo");
    let text = std::fs::read_to_string(&file).expect("payments.jadpo");
    let messy = text.replacen("action refund_charge(", "action    refund_charge(", 1);
    assert_ne!(messy, text);
    open(&mut client, &file, &messy);
    let edits = client.request(
        "textDocument/formatting",
        json!({ "textDocument": doc(&file), "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    let edits = list(&edits);
    assert_eq!(edits.len(), 1, "one edit, only over the change: {edits:?}");
    assert_eq!(apply_edits(&messy, &edits), text);

    // A formatted document needs no edit; one with a syntax error gets an
    // error answer and no edit.
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(&file), "version": 2 }, "contentChanges": [{ "text": text }] }),
    );
    let none = client.request(
        "textDocument/formatting",
        json!({ "textDocument": doc(&file), "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    assert_eq!(none, json!([]));
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(&file), "version": 3 }, "contentChanges": [{ "text": "action f( {\n" }] }),
    );
    let id = client.server.send_request(
        "textDocument/formatting",
        json!({ "textDocument": doc(&file), "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    let deadline = Instant::now() + WAIT;
    let refused = loop {
        let m = client.server.next(deadline, "the formatting answer");
        if m["id"] == json!(id) {
            break m;
        }
    };
    assert_eq!(refused["error"]["code"], -32803, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("syntax error at 1:"), "{message}");
}

fn labels(items: &Value) -> Vec<String> {
    list(items)
        .iter()
        .filter_map(|i| i["label"].as_str().map(str::to_string))
        .collect()
}

fn detail_of(items: &Value, label: &str) -> String {
    list(items)
        .iter()
        .find(|i| i["label"] == label)
        .and_then(|i| i["detail"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no item `{label}` in {items}"))
}

/// Completion over stdio: a package's operations after `pkg.`, the fields
/// of a construction not yet given, and the names in scope.
#[test]
fn completion_offers_operations_fields_and_names_in_scope() {
    let app = billing_copy("completion");
    let mut client = Client::start(&app);
    let init = client.request(
        "initialize",
        json!({ "processId": null, "capabilities": editor_capabilities() }),
    );
    assert_eq!(
        init["capabilities"]["completionProvider"]["triggerCharacters"],
        json!(["."])
    );
    client.notify("initialized", json!({}));
    let file = app.join("src/payments.jadpo");
    let text = std::fs::read_to_string(&file).expect("payments.jadpo");
    // Line 5 (0-based 4) is `action refund_charge(request: RefundRequest) ...`;
    // completion is asked inside its body, at the start of line 6.
    let at = |line: u32, character: u32| json!({ "textDocument": doc(&file), "position": { "line": line, "character": character } });
    open(&mut client, &file, &text);
    let names = client.request("textDocument/completion", at(5, 4));
    let found = labels(&names);
    for want in [
        "request",
        "refund_charge",
        "cancel_subscription",
        "stripe",
        "Subscription",
    ] {
        assert!(
            found.iter().any(|l| l == want),
            "`{want}` missing from {found:?}"
        );
    }
    assert_eq!(detail_of(&names, "request"), "RefundRequest");
    // The client declared no kinds: only those of the protocol's first
    // version (1 to 18) are sent (issue 38), so `Subscription` (an entity,
    // a struct) goes as a class.
    let kinds: Vec<u64> = list(&names)
        .iter()
        .filter_map(|i| i["kind"].as_u64())
        .collect();
    assert!(kinds.iter().all(|k| (1..=18).contains(k)), "{kinds:?}");
    let kind_of = |label: &str| {
        list(&names)
            .iter()
            .find(|i| i["label"] == label)
            .map(|i| i["kind"].clone())
    };
    assert_eq!(kind_of("Subscription"), Some(json!(7)));

    // `stripe.` on a new line of the body.
    let edited = text.replacen(
        "action refund_charge(request: RefundRequest) fails ChargeUnknown -> Bool {\n",
        "action refund_charge(request: RefundRequest) fails ChargeUnknown -> Bool {\n    stripe.\n",
        1,
    );
    assert_ne!(edited, text);
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(&file), "version": 2 }, "contentChanges": [{ "text": edited }] }),
    );
    let ops = client.request("textDocument/completion", at(5, 11));
    let found = labels(&ops);
    assert!(found.iter().any(|l| l == "customers.create"), "{found:?}");
    assert!(detail_of(&ops, "customers.create").contains("changes; keyed (Idempotency-Key)"));
    assert!(detail_of(&ops, "prices.retrieve").contains("a read"));
    assert!(detail_of(&ops, "customers.delete").contains("safe to repeat"));
    assert!(found.iter().any(|l| l == "CardDeclined"), "{found:?}");

    // Inside a construction: the fields not given yet.
    let edited = text.replacen("action refund_charge(request: RefundRequest) fails ChargeUnknown -> Bool {\n", "action refund_charge(request: RefundRequest) fails ChargeUnknown -> Bool {\n    var c = stripe.SubscriptionCreate { customer: \"cus_1\" \n", 1);
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(&file), "version": 3 }, "contentChanges": [{ "text": edited }] }),
    );
    let line = "    var c = stripe.SubscriptionCreate { customer: \"cus_1\" ";
    let fields = client.request("textDocument/completion", at(5, line.len() as u32));
    let mut found = labels(&fields);
    found.sort();
    assert_eq!(
        found,
        ["default_payment_method", "payment_behavior", "price"]
    );
    assert_eq!(detail_of(&fields, "price"), "stripe.PriceId");

    // `failure ` in a match: the failures no arm handles yet.
    let arm = "        failure stripe.ResourceMissing => reject ChargeUnknown\n";
    let edited = text.replacen(arm, "        failure \n", 1);
    assert_ne!(edited, text);
    change(&mut client, &file, 4, &edited);
    let arms = client.request("textDocument/completion", at(8, 16));
    assert_eq!(labels(&arms), ["stripe.ResourceMissing"]);

    // A route's settings not given yet, and an entity's fields in `where:`.
    let entries = app.join("src/entries.jadpo");
    let routes = std::fs::read_to_string(&entries).expect("entries.jadpo");
    let edited = format!("{routes}\nroute GET /x {{\n    auth: none\n    \n}}\n");
    open(&mut client, &entries, &edited);
    let line = edited.lines().count() as u32 - 2;
    let keys = client.request(
        "textDocument/completion",
        json!({ "textDocument": doc(&entries), "position": { "line": line, "character": 4 } }),
    );
    let keys = labels(&keys);
    assert!(
        keys.iter().any(|k| k == "run") && keys.iter().any(|k| k == "idempotency_key"),
        "{keys:?}"
    );
    assert!(
        !keys.iter().any(|k| k == "auth"),
        "a given setting again: {keys:?}"
    );
    let query = "    return attempt query required Subscription { where: id == id missing: SubscriptionUnknown }\n";
    let edited = text.replacen(
        query,
        "    return attempt query required Subscription { where: \n",
        1,
    );
    assert_ne!(edited, text);
    change(&mut client, &file, 5, &edited);
    let (at_where, line) = edited
        .lines()
        .enumerate()
        .find(|(_, l)| l.ends_with("{ where: "))
        .expect("the query");
    let cols = client.request(
        "textDocument/completion",
        at(at_where as u32, line.len() as u32),
    );
    let mut cols = labels(&cols);
    cols.sort();
    assert_eq!(cols, ["customer", "id", "plan"]);
}

fn change(client: &mut Client, path: &Path, version: i32, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri(path), "version": version }, "contentChanges": [{ "text": text }] }),
    );
}

/// Completion in a `package.yaml` over stdio: the keys of the block at the
/// cursor not given yet, with their kind and default, and a key's values.
#[test]
fn completion_offers_package_yaml_keys() {
    let dir = std::env::temp_dir().join(format!("jadpo-lsp-test-{}-yaml-keys", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("packages/github"),
        &dir,
    );
    let file = dir.join("package.yaml");
    let text = std::fs::read_to_string(&file).expect("package.yaml");
    let anchor = "    changes: true               # a POST: repeating it opens a second issue\n";
    let edited = text.replacen(anchor, &format!("{anchor}    \n"), 1);
    assert_ne!(edited, text);
    let mut client = Client::start(&dir);
    client.request(
        "initialize",
        json!({ "processId": null, "capabilities": editor_capabilities() }),
    );
    client.notify("initialized", json!({}));
    open(&mut client, &file, &edited);
    let mut position = position_of(&edited, anchor);
    position["line"] = json!(position["line"].as_u64().unwrap_or(0) + 1);
    position["character"] = json!(4);
    let keys = client.request(
        "textDocument/completion",
        json!({ "textDocument": doc(&file), "position": position }),
    );
    let found = labels(&keys);
    for want in ["idempotent", "keyed", "timeout", "window", "large_output"] {
        assert!(
            found.iter().any(|l| l == want),
            "`{want}` missing from {found:?}"
        );
    }
    for given in ["request", "answer", "changes", "failures"] {
        assert!(
            !found.iter().any(|l| l == given),
            "`{given}` is given: {found:?}"
        );
    }
    assert_eq!(detail_of(&keys, "keyed"), "boolean; default true");
    assert_eq!(detail_of(&keys, "timeout"), "duration");

    let edited = edited.replacen(
        "  attempts: 2\n",
        "  attempts: 2\n  idempotency:\n    new_key_on: \n",
        1,
    );
    change(&mut client, &file, 2, &edited);
    let line = edited
        .lines()
        .position(|l| l == "    new_key_on: ")
        .expect("the line");
    let values = client.request(
        "textDocument/completion",
        json!({ "textDocument": doc(&file), "position": { "line": line, "character": 16 } }),
    );
    let mut found = labels(&values);
    found.sort();
    assert_eq!(found, ["answer", "none"]);
    assert_eq!(detail_of(&values, "none"), "the default");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Range formatting over stdio: only the selected lines' layout changes;
/// a messy line outside the selection stays as it is.
#[test]
fn range_formatting_changes_only_the_selected_lines() {
    let app = billing_copy("range-formatting");
    let mut client = Client::start(&app);
    let init = client.request(
        "initialize",
        json!({ "processId": null, "capabilities": editor_capabilities() }),
    );
    assert_eq!(
        init["capabilities"]["documentRangeFormattingProvider"],
        true
    );
    client.notify("initialized", json!({}));
    let file = app.join("src/payments.jadpo");
    let text = std::fs::read_to_string(&file).expect("payments.jadpo");
    let first = "action refund_charge(";
    let messy = text
        .replacen(first, "action    refund_charge(", 1)
        .replacen(
            "action cancel_subscription(",
            "action   cancel_subscription(",
            1,
        );
    assert_eq!(messy.matches("action   ").count(), 2, "both edits landed");
    open(&mut client, &file, &messy);
    let line = messy
        .lines()
        .position(|l| l.starts_with("action    refund_charge("))
        .expect("the line");
    let edits = client.request(
        "textDocument/rangeFormatting",
        json!({
            "textDocument": doc(&file),
            "range": { "start": { "line": line, "character": 0 }, "end": { "line": line + 1, "character": 0 } },
            "options": { "tabSize": 4, "insertSpaces": true },
        }),
    );
    let after = apply_edits(&messy, &list(&edits));
    assert!(
        after.contains(first),
        "the selected line is formatted:\n{after}"
    );
    assert!(
        after.contains("action   cancel_subscription("),
        "a line outside is kept:\n{after}"
    );
    assert_eq!(
        after.replacen(
            "action   cancel_subscription(",
            "action cancel_subscription(",
            1
        ),
        text
    );
}

/// A fresh copy of `examples/mistakes` under `name` (which may hold spaces
/// and other characters a URI encodes).
fn mistakes_copy(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jadpo-lsp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mistakes"),
        &dir,
    );
    dir
}

/// A client that takes no related information, plain-text hover only and
/// no code action literals, spelling its URIs its own way: diagnostics come
/// under its spelling without related information, hover is plain text,
/// and quick fixes are commands the server carries out by asking the
/// client to apply the edit.
#[test]
fn answers_follow_what_the_client_supports() {
    let app = mistakes_copy("a café+b");
    let mut client = Client::start(&app);
    let init = client.request(
        "initialize",
        json!({ "processId": null, "capabilities": { "textDocument": {
            "publishDiagnostics": { "relatedInformation": false },
            "hover": { "contentFormat": ["plaintext"] },
            "codeAction": {},
        } } }),
    );
    assert_eq!(
        init["capabilities"]["executeCommandProvider"]["commands"],
        json!(["jadpo.applyEdit"])
    );
    client.notify("initialized", json!({}));
    let file = app.join("src/missing_fails.jadpo");
    let text = std::fs::read_to_string(&file).expect("missing_fails.jadpo");
    // The server spells `é` as `%C3%A9` and `+` as itself; this client
    // writes lower-case escapes and `%2B`.
    let ours = uri(&file);
    let theirs = ours.replace("%C3%A9", "%c3%a9").replace('+', "%2B");
    assert_ne!(ours, theirs, "the spellings differ");
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": theirs, "languageId": "jadpo", "version": 1, "text": text } }),
    );
    let deadline = Instant::now() + WAIT;
    let published = loop {
        let m = client
            .server
            .next(deadline, "diagnostics for the opened file");
        if m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"]
                .as_str()
                .is_some_and(|u| u.ends_with("missing_fails.jadpo"))
        {
            break m;
        }
    };
    assert_eq!(
        published["params"]["uri"],
        json!(theirs),
        "under the client's spelling"
    );
    let diags = list(&published["params"]["diagnostics"]);
    assert!(
        diags
            .iter()
            .any(|d| code_of(d) == "failure.missing_in_fails"),
        "{diags:?}"
    );
    assert!(
        diags.iter().all(|d| d.get("relatedInformation").is_none()),
        "{diags:?}"
    );

    // After an edit, the last word on the file is its findings (an empty
    // list under either spelling would wipe them in the editor).
    let edited = text.replacen("action find_price", "action  find_price", 1);
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": theirs, "version": 2 }, "contentChanges": [{ "text": edited }] }),
    );
    let doc = json!({ "uri": theirs });
    client.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": doc }),
    );
    let last = client
        .pending
        .iter()
        .rev()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .find(|m| {
            m["params"]["uri"]
                .as_str()
                .is_some_and(|u| u.ends_with("missing_fails.jadpo"))
        })
        .expect("diagnostics after the edit");
    assert_eq!(last["params"]["uri"], json!(theirs));
    assert!(!list(&last["params"]["diagnostics"]).is_empty(), "{last}");
    let text = edited;
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": doc, "position": position_of(&text, "find_price") }),
    );
    assert_eq!(hover["contents"]["kind"], "plaintext", "{hover}");
    let value = hover["contents"]["value"].as_str().unwrap_or("");
    assert!(
        !value.contains('`') && !value.contains("**") && !value.is_empty(),
        "{value}"
    );

    let d = diags
        .iter()
        .find(|d| code_of(d) == "failure.missing_in_fails")
        .expect("the finding");
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": doc, "range": d["range"], "context": { "diagnostics": [d] } }),
    );
    let actions = list(&actions);
    assert!(!actions.is_empty());
    let command = &actions[0];
    assert_eq!(
        command["command"], "jadpo.applyEdit",
        "a Command, not a literal: {command}"
    );
    assert!(command.get("edit").is_none());
    client.request(
        "workspace/executeCommand",
        json!({ "command": "jadpo.applyEdit", "arguments": command["arguments"] }),
    );
    let asked = client
        .pending
        .iter()
        .find(|m| m["method"] == "workspace/applyEdit")
        .expect("the server asks the client to apply the edit");
    assert_eq!(asked["params"]["edit"], command["arguments"][1]);
    assert!(asked["id"].is_string() || asked["id"].is_number());
    let _ = std::fs::remove_dir_all(&app);
}

/// Issue 37: a file whose nesting limits multiply (30 groups of 250 `-`)
/// is `syntax.too_deep` in the editor too, on opening it and when it is on
/// disk at startup, and the server lives on; diagnostics after a lone
/// carriage return sit on the line the editor shows.
#[test]
fn hostile_files_get_diagnostics_and_the_server_lives_on() {
    let app = billing_copy("hostile-open");
    let mut deep = "1".to_string();
    for _ in 0..30 {
        deep = format!("({}{deep})", "- ".repeat(250));
    }
    let deep_text = format!("function deep() -> Int {{\n    return {deep}\n}}\n");
    std::fs::write(app.join("src/on_disk.jadpo"), &deep_text).expect("write");
    let mut client = Client::start(&app);
    client.request(
        "initialize",
        json!({ "processId": null, "rootUri": uri(&app), "capabilities": editor_capabilities() }),
    );
    client.notify("initialized", json!({}));
    let opened = app.join("src/opened.jadpo");
    open(
        &mut client,
        &opened,
        &deep_text.replace("deep()", "deep2()"),
    );
    let found = client.diagnostics("src/opened.jadpo");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(code_of(&found[0]), "syntax.too_deep");

    // `return 2` follows a lone CR: the editor shows it on line 2 (0-based),
    // and the CR's own diagnostic is on line 1.
    let cr = app.join("src/cr.jadpo");
    open(
        &mut client,
        &cr,
        "function f() -> Int {\n    return 1 // one\r    return x\n}\n",
    );
    let found = client.diagnostics("src/cr.jadpo");
    let mut places: Vec<(String, u64)> = found
        .iter()
        .map(|d| {
            (
                code_of(d).to_string(),
                d["range"]["start"]["line"].as_u64().unwrap_or(99),
            )
        })
        .collect();
    places.sort();
    assert_eq!(
        places,
        [
            ("name.unknown_variable".to_string(), 2),
            ("syntax.control_character".to_string(), 1),
        ],
        "{found:?}"
    );
    // Still answering.
    let hover = client.request("textDocument/hover", at(&cr, "f()", "f()"));
    assert!(hover.is_null() || hover.is_object(), "{hover}");
}

/// A client that declares the kinds it shows gets them: an entity is a
/// struct (22) when the client lists 22.
#[test]
fn completion_kinds_follow_the_clients_value_set() {
    let app = billing_copy("completion-kinds");
    let mut client = Client::start(&app);
    let mut caps = editor_capabilities();
    caps["textDocument"]["completion"] =
        json!({ "completionItemKind": { "valueSet": (1..=25).collect::<Vec<u32>>() } });
    client.request(
        "initialize",
        json!({ "processId": null, "capabilities": caps }),
    );
    client.notify("initialized", json!({}));
    let file = app.join("src/payments.jadpo");
    let text = std::fs::read_to_string(&file).expect("payments.jadpo");
    open(&mut client, &file, &text);
    let names = client.request(
        "textDocument/completion",
        json!({ "textDocument": doc(&file), "position": { "line": 5, "character": 4 } }),
    );
    let subscription = list(&names)
        .into_iter()
        .find(|i| i["label"] == "Subscription")
        .expect("Subscription is offered");
    assert_eq!(subscription["kind"], 22);
}

/// The editor's allocator keeps freed memory 10 s, then marks it free to
/// the system without unmapping it (`src/memory.rs`): an edit after a
/// pause reuses it without faulting every page in again.
#[test]
fn the_editor_keeps_freed_memory_and_only_marks_it_free() {
    jadpo::memory::keep_freed_pages();
    assert_eq!(jadpo::memory::purge_settings(), (10_000, false));
}
