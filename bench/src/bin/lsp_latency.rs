//! `lsp_latency --app DIR [--file REL] [--edits N] [--jadpo PATH] [--syntax | --declaration] [--each] [--pause MS]`:
//! measures `jadpo lsp` as an editor sees it: the time from sending a
//! `didChange` to receiving the `publishDiagnostics` for that file, over N
//! edits of one file of the app (alternately adding and removing a line,
//! and breaking and fixing a name; with `--syntax`, opening a parenthesis
//! in a call, typing in it and closing it again, the file broken in
//! between; with `--declaration`, adding a type declaration at the top and
//! removing it again, each edit changing the declarations), and prints the
//! cold start, p50, p95 and max; `--each` also prints every edit's time
//! in the order sent (a p95 is the second or third slowest of 40 edits:
//! which ones, and whether they are the first, tells a slow spell of the
//! machine from a slow path); `--pause MS` waits that long before each
//! edit, as a person reading between edits (the allocator gives back
//! what it freed after 10 s idle, so edits after a longer pause find no
//! memory ready).
//!
//! Used by `scripts/lsp_latency.sh` on a generated 100k-line app.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(300);

struct Args {
    app: PathBuf,
    file: Option<String>,
    edits: usize,
    jadpo: PathBuf,
    /// Edits that leave a syntax error every other time.
    syntax: bool,
    /// Edits that add and remove a declaration.
    declaration: bool,
    /// Every edit's time printed, in order.
    each: bool,
    /// How long to wait before each edit.
    pause: Duration,
}

fn main() -> ExitCode {
    let Some(args) = parse_args() else {
        eprintln!(
            "usage: lsp_latency --app DIR [--file REL] [--edits N] [--jadpo PATH] [--syntax | --declaration] [--each] [--pause MS]"
        );
        return ExitCode::from(2);
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn parse_args() -> Option<Args> {
    let beside = std::env::current_exe().ok()?.with_file_name("jadpo");
    let mut args = Args {
        app: PathBuf::new(),
        file: None,
        edits: 200,
        jadpo: beside,
        syntax: false,
        declaration: false,
        each: false,
        pause: Duration::ZERO,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--declaration" {
            args.declaration = true;
            continue;
        }
        if flag == "--syntax" {
            args.syntax = true;
            continue;
        }
        if flag == "--each" {
            args.each = true;
            continue;
        }
        let value = it.next()?;
        match flag.as_str() {
            "--app" => args.app = PathBuf::from(value),
            "--file" => args.file = Some(value),
            "--edits" => args.edits = value.parse().ok()?,
            "--jadpo" => args.jadpo = PathBuf::from(value),
            "--pause" => args.pause = Duration::from_millis(value.parse().ok()?),
            _ => return None,
        }
    }
    let app = std::fs::canonicalize(&args.app).ok()?;
    args.app = app;
    Some(args)
}

struct Server {
    stdin: std::process::ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
}

impl Server {
    fn send(&mut self, message: &Value) -> Result<(), String> {
        let body = message.to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.stdin
            .write_all(framed.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("cannot write to jadpo lsp: {e}"))
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            let m = self.recv()?;
            if m["id"] == json!(id) && m.get("method").is_none() {
                return Ok(m["result"].clone());
            }
        }
    }

    fn recv(&self) -> Result<Value, String> {
        self.incoming
            .recv_timeout(WAIT)
            .map_err(|_| "jadpo lsp went silent".to_string())
    }

    /// Waits for the diagnostics of `uri`; returns how many there were.
    fn diagnostics_for(&self, uri: &str) -> Result<usize, String> {
        loop {
            let m = self.recv()?;
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri {
                return Ok(m["params"]["diagnostics"].as_array().map_or(0, Vec::len));
            }
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let file = match &args.file {
        Some(rel) => args.app.join(rel),
        None => pick_file(&args.app).ok_or("no .jadpo file under src/")?,
    };
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let (lines, bytes) = app_size(&args.app);
    let mut child = Command::new(&args.jadpo)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", args.jadpo.display()))?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, incoming) = channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        while let Some(m) = read_message(&mut reader) {
            if tx.send(m).is_err() {
                break;
            }
        }
    });
    let mut server = Server {
        stdin,
        incoming,
        next_id: 0,
    };
    let result = measure(&mut server, args, &file, &text, lines, bytes);
    let _ = server.request("shutdown", Value::Null);
    let _ = server.notify("exit", Value::Null);
    let _ = child.wait();
    result
}

fn measure(
    server: &mut Server,
    args: &Args,
    file: &Path,
    text: &str,
    lines: usize,
    bytes: usize,
) -> Result<(), String> {
    let uri = file_uri(file);
    server.request(
        "initialize",
        json!({ "processId": null, "capabilities": { "textDocument": {
            // An editor taking everything the server offers.
            "publishDiagnostics": { "relatedInformation": true },
            "codeAction": { "codeActionLiteralSupport": { "codeActionKind": { "valueSet": ["quickfix"] } } },
        } } }),
    )?;
    server.notify("initialized", json!({}))?;
    let start = Instant::now();
    server.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "jadpo", "version": 1, "text": text } }),
    )?;
    let initial = server.diagnostics_for(&uri)?;
    let cold = start.elapsed();
    let mut times = Vec::with_capacity(args.edits);
    let mut hovers = Vec::new();
    let (name_line, name_col, name_len) = first_call(text).ok_or("no call to break in the file")?;
    for i in 0..args.edits {
        let change = if args.syntax {
            syntax_edit(i, name_line, name_col + name_len)
        } else if args.declaration {
            declaration_edit(i)
        } else {
            edit(i, name_line, name_col, name_len)
        };
        std::thread::sleep(args.pause);
        let start = Instant::now();
        server.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": i + 2 }, "contentChanges": [change] }),
        )?;
        let _ = server.diagnostics_for(&uri)?;
        times.push(start.elapsed());
        if i % 4 == 3 {
            // The text is as opened again: hover on the call just fixed.
            let start = Instant::now();
            let at = json!({ "line": name_line, "character": name_col });
            server.request(
                "textDocument/hover",
                json!({ "textDocument": { "uri": uri }, "position": at }),
            )?;
            hovers.push(start.elapsed());
        }
    }
    let each: Vec<String> = times.iter().map(|t| format!("{:.1}", ms(*t))).collect();
    times.sort();
    hovers.sort();
    let pick = |times: &[Duration], q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(i).copied().unwrap_or_default()
    };
    println!(
        "app: {} ({lines} lines, {:.1} MB); edited: {}",
        args.app.display(),
        bytes as f64 / 1e6,
        file.strip_prefix(&args.app).unwrap_or(file).display()
    );
    println!(
        "cold open to first diagnostics: {:.1} ms ({initial} diagnostics in the file)",
        ms(cold)
    );
    println!(
        "didChange to publishDiagnostics over {} edits: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        times.len(),
        ms(pick(&times, 0.5)),
        ms(pick(&times, 0.95)),
        ms(times.last().copied().unwrap_or_default())
    );
    println!(
        "hover on the edited call right after its edit, {} times: p50 {:.1} ms, p95 {:.1} ms",
        hovers.len(),
        ms(pick(&hovers, 0.5)),
        ms(pick(&hovers, 0.95)),
    );
    if args.each {
        println!("each edit, in order (ms): {}", each.join(" "));
    }
    Ok(())
}

/// Edit `i`: 0 adds a comment line at the top, 1 removes it, 2 breaks the
/// first call's name (an error appears), 3 fixes it; and again.
fn edit(i: usize, line: usize, col: usize, len: usize) -> Value {
    let at = |l: usize, c: usize| json!({ "line": l, "character": c });
    match i % 4 {
        0 => json!({ "range": { "start": at(0, 0), "end": at(0, 0) }, "text": "// edited\n" }),
        1 => json!({ "range": { "start": at(0, 0), "end": at(1, 0) }, "text": "" }),
        2 => {
            json!({ "range": { "start": at(line, col + len), "end": at(line, col + len) }, "text": "_x" })
        }
        _ => {
            json!({ "range": { "start": at(line, col + len), "end": at(line, col + len + 2) }, "text": "" })
        }
    }
}

/// Edit `i` with `--declaration`: 0 adds a type declaration at the top,
/// 1 removes it; and again.
fn declaration_edit(i: usize) -> Value {
    let at = |l: usize| json!({ "line": l, "character": 0 });
    match i % 2 {
        0 => json!({ "range": { "start": at(0), "end": at(0) },
                     "text": "type ProbeAdded = Text { max_length: 8 }\n" }),
        _ => json!({ "range": { "start": at(0), "end": at(1) }, "text": "" }),
    }
}

/// Edit `i` with `--syntax`, as typing inside a call passes through a
/// broken file: 0 opens a parenthesis right after the first call's name
/// (the file no longer parses), 1 types a letter after it, 2 removes the
/// letter, 3 the parenthesis; and again.
fn syntax_edit(i: usize, line: usize, col: usize) -> Value {
    let at = |c: usize| json!({ "line": line, "character": c });
    let (start, end, text) = match i % 4 {
        0 => (col, col, "("),
        1 => (col + 1, col + 1, "x"),
        2 => (col + 1, col + 2, ""),
        _ => (col, col + 1, ""),
    };
    json!({ "range": { "start": at(start), "end": at(end) }, "text": text })
}

/// Line, column and length of the first `attempt name(` callee in the text
/// (ASCII text assumed: the generated corpus is).
fn first_call(text: &str) -> Option<(usize, usize, usize)> {
    for (n, line) in text.lines().enumerate() {
        if let Some(at) = line.find("attempt ") {
            let rest = &line[at + 8..];
            let len = rest.find('(')?;
            if len > 0
                && rest[..len]
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
            {
                return Some((n, at + 8, len));
            }
        }
    }
    None
}

fn pick_file(app: &Path) -> Option<PathBuf> {
    let mut found = Vec::new();
    collect(&app.join("src"), &mut found);
    found.sort();
    let with_call: Vec<PathBuf> = found
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(p)
                .ok()
                .as_deref()
                .and_then(first_call)
                .is_some()
        })
        .collect();
    with_call.get(with_call.len() / 2).cloned()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "jadpo") {
            out.push(path);
        }
    }
}

fn app_size(app: &Path) -> (usize, usize) {
    let mut files = Vec::new();
    collect(app, &mut files);
    files.iter().fold((0, 0), |(l, b), p| {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        (l + text.lines().count(), b + text.len())
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn file_uri(path: &Path) -> String {
    jadpo::lsp::uri::from_path(path).map_or_else(String::new, |uri| uri.as_str().to_string())
}

/// The next message from the server, as JSON (`lsp-server` does the framing).
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let message = lsp_server::Message::read(reader).ok()??;
    serde_json::to_value(message).ok()
}
