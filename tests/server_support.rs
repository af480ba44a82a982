//! What the server tests share: `jadpo dev` on `examples/billing` as a
//! child process on 127.0.0.1 with a store of its own, and requests to it.
//! Every wait is bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const BILLING: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/billing");
/// `sha256("test-token")`: the API key GET /subscriptions/{id} is read with.
pub const KEYS: &str = "tester:4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e";
pub const BODY: &str =
    r#"{"email":"ada@example.com","price":"price_basic","payment_method":"pm_1"}"#;

pub struct Dev {
    pub child: Child,
    pub port: u16,
    /// What it printed on standard output after it said where it serves.
    pub lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("jadpo-crash-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// Starts `jadpo dev` on `db`, with a crash point when given; waits (at
/// most 30 s) until it serves.
pub fn start(db: &Path, crash: Option<&str>) -> Dev {
    start_with(db, crash, "1")
}

/// [`start`] with a lease of `lease` seconds.
pub fn start_with(db: &Path, crash: Option<&str>, lease: &str) -> Dev {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    cmd.args(["dev", BILLING, "--listen", "127.0.0.1:0", "--no-reload"])
        .args(["--format", "json", "--lease", lease, "--db"])
        .arg(db)
        .env("JADPO_API_KEYS", KEYS)
        .env_remove("JADPO_CRASH_AT");
    if let Some(c) = crash {
        cmd.env("JADPO_CRASH_AT", c);
    }
    spawn(cmd).unwrap_or_else(|why| panic!("{why}"))
}

/// Runs `cmd` until it says where it serves (at most 30 s); what it wrote
/// to its standard error when it ends first.
pub fn spawn(mut cmd: Command) -> Result<Dev, String> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot run jadpo: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            return Err(err);
        }
        let Ok(line) = receive.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        if let Some(port) = line
            .split("://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|p| p.parse().ok())
        {
            // Keep reading its output (so it never blocks on a full pipe),
            // for tests that wait for a line.
            let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let kept = lines.clone();
            std::thread::spawn(move || {
                while let Ok(line) = receive.recv() {
                    if let Ok(mut l) = kept.lock() {
                        l.push(line);
                    }
                }
            });
            if let Some(mut e) = child.stderr.take() {
                std::thread::spawn(move || {
                    let mut sink = Vec::new();
                    let _ = e.read_to_end(&mut sink);
                });
            }
            return Ok(Dev { child, port, lines });
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    Err("jadpo did not start within 30 s".into())
}

impl Dev {
    /// Waits (at most `secs` seconds) for a line of its output holding
    /// `needle`; every line from that one on, or `None`.
    pub fn wait_for(&self, needle: &str, secs: u64) -> Option<Vec<String>> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < deadline {
            if let Ok(l) = self.lines.lock() {
                if let Some(at) = l.iter().position(|x| x.contains(needle)) {
                    return Some(l[at..].to_vec());
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    /// One request; `None` when the connection broke (the process died).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Option<(u16, String)> {
        let bytes = request_bytes(method, path, headers, "application/json", body.as_bytes());
        self.raw(&bytes).map(|(status, _, body)| (status, body))
    }

    /// Bytes as sent; the status, the head and the body.
    pub fn raw(&self, bytes: &[u8]) -> Option<(u16, String, String)> {
        raw_to(self.port, bytes)
    }

    /// Waits (at most 20 s) for the process to end by itself.
    pub fn died(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Every line it printed, then [`Dev::stop`].
    pub fn stop_with_lines(self) -> String {
        let all = self.lines.lock().map(|l| l.join("\n")).unwrap_or_default();
        self.stop();
        all
    }

    /// SIGTERM, then at most 15 s for a clean exit.
    pub fn stop(mut self) {
        #[cfg(unix)]
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Bytes sent to 127.0.0.1:`port`; the status, the head and the body.
pub fn raw_to(port: u16, bytes: &[u8]) -> Option<(u16, String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    // A server may answer before it reads a large body: a write error
    // after the head still leaves its answer to read.
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out).into_owned();
    let status = out.split(' ').nth(1)?.parse().ok()?;
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    Some((status, head.to_ascii_lowercase(), body.to_string()))
}

const STEPS_KEY: &str = "test-only-key";

/// `jadpo dev` on the app at `app`, its store at `db`, fakes from the
/// fixture `fakes`, a lease of 1 s.
pub fn dev_at(app: &Path, db: &Path, fakes: &str) -> Dev {
    dev_with(app, db, fakes, &[])
}

/// [`dev_at`] with more flags; `--no-reload` unless `flags` holds
/// `reload` (which is not passed on).
pub fn dev_with(app: &Path, db: &Path, fakes: &str, flags: &[&str]) -> Dev {
    dev_crashing(app, db, fakes, flags, None)
}

/// [`dev_with`], killed by the crash hook at `crash` (`JADPO_CRASH_AT`)
/// when given.
pub fn dev_crashing(
    app: &Path,
    db: &Path,
    fakes: &str,
    flags: &[&str],
    crash: Option<&str>,
) -> Dev {
    let mut cmd = dev_command(app, db, fakes, flags);
    if let Some(c) = crash {
        cmd.env("JADPO_CRASH_AT", c);
    }
    spawn(cmd).unwrap_or_else(|e| panic!("{e}"))
}

/// The `jadpo dev` command [`dev_with`] starts, for a test that expects
/// it to refuse.
pub fn dev_command(app: &Path, db: &Path, fakes: &str, flags: &[&str]) -> Command {
    let reload = flags.contains(&"reload");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jadpo"));
    cmd.arg("dev")
        .args(flags.iter().filter(|f| **f != "reload"))
        .arg(app)
        .args(["--listen", "127.0.0.1:0"])
        .args(if reload { None } else { Some("--no-reload") })
        .args(["--format", "json", "--lease", "1", "--fakes", fakes, "--db"])
        .arg(db)
        .env("JADPO_API_KEYS", KEYS)
        .env_remove("JADPO_CRASH_AT");
    cmd
}

/// An operator command on the app at `app` and its store at `db`, with
/// the steps key.
pub fn jadpo_at(app: &Path, db: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .args(args)
        .arg("--app")
        .arg(app)
        .arg("--store")
        .arg(format!("sqlite:{}", db.display()))
        .env("STEPS_KEY", STEPS_KEY)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A command's standard output, then its standard error.
pub fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The listing with its id and clock times replaced, for a snapshot.
pub fn steady(text: &str, id: &str) -> String {
    let kind = id.split('_').next().unwrap_or("x");
    let text = text.replace(id, &format!("{kind}_ID"));
    // `until 10:02 tomorrow`: the minute of the window's end.
    // `until 10:02 tomorrow` or `until 2026-12-05 10:02 UTC`: the window's end.
    let text = match text.find("key until ") {
        Some(at) => {
            let start = at + "key until ".len();
            let dated = text.as_bytes().get(start + 4) == Some(&b'-');
            let (len, with) = if dated {
                (16, "DATE HH:MM")
            } else {
                (5, "HH:MM")
            };
            let mut t = text.clone();
            t.replace_range(start..(start + len).min(t.len()), with);
            t
        }
        None => text,
    };
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let time = chars.len() >= i + 8
            && chars[i..i + 8].iter().enumerate().all(|(j, c)| {
                if j == 2 || j == 5 {
                    *c == ':'
                } else {
                    c.is_ascii_digit()
                }
            });
        if time {
            out.push_str("HH:MM:SS");
            i += 8;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// `jadpo build APP --out OUT`, which must succeed.
pub fn jadpo_build(app: &Path, out: &Path) {
    let built = Command::new(env!("CARGO_BIN_EXE_jadpo"))
        .arg("build")
        .arg(app)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(built.status.success(), "{}", text(&built));
}

/// A request as bytes: method, path, headers, a body of `content_type`.
pub fn request_bytes(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    content_type: &str,
    body: &[u8],
) -> Vec<u8> {
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    text.push_str("\r\n");
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// A copy of `examples/billing` in `dir/app`, named `name` (a Postgres
/// schema is the app's name, so each test's store is its own).
pub fn copy_billing(dir: &Path, name: &str) -> PathBuf {
    let app = dir.join("app");
    for sub in ["src", "tests"] {
        std::fs::create_dir_all(app.join(sub)).unwrap_or_else(|e| panic!("{e}"));
        let from = Path::new(BILLING).join(sub);
        for f in std::fs::read_dir(&from).unwrap_or_else(|e| panic!("{e}")) {
            let f = f.unwrap_or_else(|e| panic!("{e}")).path();
            if let Some(file) = f.file_name() {
                std::fs::copy(&f, app.join(sub).join(file)).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
    let manifest = std::fs::read_to_string(Path::new(BILLING).join("jadpo.yaml"))
        .unwrap_or_else(|e| panic!("{e}"))
        .replace("app: billing", &format!("app: {name}"));
    std::fs::write(app.join("jadpo.yaml"), manifest).unwrap_or_else(|e| panic!("{e}"));
    app
}

/// The test Postgres server's URL (`scripts/with-postgres.sh` exports
/// it); `None`, saying so, without one.
pub fn postgres() -> Option<String> {
    match std::env::var("JADPO_TEST_PG") {
        Ok(v) if v.starts_with("postgres") => Some(v),
        Ok(v) if v == "required" => panic!("JADPO_TEST_PG=required, but no server"),
        _ => {
            eprintln!("skipped: no Postgres (run through scripts/with-postgres.sh to test it)");
            None
        }
    }
}

/// Where the operator tests' app keeps its work: `jadpo dev` on a SQLite
/// file, or `jadpo serve` of a build on Postgres.
pub enum Backend {
    Sqlite(PathBuf),
    Postgres(String),
}

/// An app with a store, run by a server and read by the operator commands.
pub struct Ops {
    pub app: PathBuf,
    pub dir: PathBuf,
    pub store: Backend,
}

impl Ops {
    /// `examples/billing` itself on `dir/dev.sqlite`.
    pub fn sqlite(dir: &Path) -> Ops {
        Ops {
            app: PathBuf::from(BILLING),
            dir: dir.to_path_buf(),
            store: Backend::Sqlite(dir.join("dev.sqlite")),
        }
    }

    /// A copy of billing named `name`, built into `dir/build`, on the
    /// Postgres server at `url`.
    pub fn postgres(dir: &Path, name: &str, url: &str) -> Ops {
        let app = copy_billing(dir, name);
        jadpo_build(&app, &dir.join("build"));
        Ops {
            app,
            dir: dir.to_path_buf(),
            store: Backend::Postgres(url.to_string()),
        }
    }

    /// A server of the app with fakes from `fakes` (one journal across
    /// restarts, as one provider).
    pub fn start(&self, fakes: &str) -> Dev {
        self.start_with(fakes, &[], &[])
    }

    /// [`Ops::start`] with more flags and variables (a Postgres server's;
    /// `jadpo dev` takes neither).
    pub fn start_with(&self, fakes: &str, flags: &[&str], vars: &[(&str, &str)]) -> Dev {
        let url = match &self.store {
            Backend::Sqlite(db) => return dev_at(&self.app, db, fakes),
            Backend::Postgres(url) => url,
        };
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_jadpo"));
        cmd.arg("serve")
            .arg(self.dir.join("build"))
            .args(["--listen", "127.0.0.1:0", "--metrics-listen", ""])
            .args(["--lease", "1", "--log", "human", "--fakes", fakes])
            .arg("--fakes-journal")
            .arg(self.dir.join("fakes.jsonl"))
            .env("JADPO_STORE_PRIMARY", url)
            .env("BASIC_PRICE", "price_basic")
            .env("STEPS_KEY", STEPS_KEY)
            .env("JADPO_API_KEYS", KEYS)
            .env_remove("JADPO_CRASH_AT")
            .env_remove("JADPO_FAKE_DELAY_MS")
            .args(flags)
            .envs(vars.iter().copied());
        spawn(cmd).unwrap_or_else(|e| panic!("{e}"))
    }

    /// An operator command on the store, with the steps key.
    pub fn jadpo(&self, args: &[&str]) -> std::process::Output {
        self.jadpo_with(args, &[])
    }

    /// [`Ops::jadpo`] with more variables.
    pub fn jadpo_with(&self, args: &[&str], vars: &[(&str, &str)]) -> std::process::Output {
        let store = match &self.store {
            Backend::Sqlite(db) => format!("sqlite:{}", db.display()),
            Backend::Postgres(url) => url.clone(),
        };
        Command::new(env!("CARGO_BIN_EXE_jadpo"))
            .args(args)
            .arg("--app")
            .arg(&self.app)
            .args(["--store", &store])
            .env("STEPS_KEY", STEPS_KEY)
            .envs(vars.iter().copied())
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// `cmd`'s output, once it exits within `secs`; a command still running
/// then is killed and the test fails (a refusal that did not happen).
pub fn output_within(mut cmd: Command, secs: u64) -> std::process::Output {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    panic!("still running after {secs} s: {}", text(&out));
}

/// What the fake provider acted on in a `jadpo dev` run on `db` (its
/// journal beside it): the operations, sorted, and the (operation, key)
/// pairs it acted on more than once.
pub fn effects(db: &Path) -> (Vec<String>, Vec<(String, String)>) {
    let mut journal = db.as_os_str().to_owned();
    journal.push(".fakes.jsonl");
    let text = std::fs::read_to_string(std::path::PathBuf::from(journal)).unwrap_or_default();
    let mut acted = Vec::new();
    let mut per_key: std::collections::BTreeMap<(String, String), u32> = Default::default();
    for line in text.lines() {
        let Ok(j) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if j["acted"] != true {
            continue;
        }
        let op = j["operation"].as_str().unwrap_or("").to_string();
        let key = j["key"].as_str().unwrap_or("").to_string();
        acted.push(op.clone());
        *per_key.entry((op, key)).or_default() += 1;
    }
    acted.sort();
    let repeated = per_key
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(k, _)| k)
        .collect();
    (acted, repeated)
}

/// Runs `run` on every case, four at a time on threads of their own (each
/// run has its own store and port), and checks each ended as `clean`
/// did, with no (operation, key) the fake provider acted on twice.
pub fn crashed_runs_end_as_clean<C: Sync, L: PartialEq + std::fmt::Debug + Send>(
    cases: &[C],
    name: impl Fn(&C) -> String + Sync,
    run: impl Fn(&C, &str) -> (L, Vec<(String, String)>) + Sync,
    clean: &L,
) {
    for chunk in cases.chunks(4) {
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|case| {
                    let (name, run) = (name(case), &run);
                    s.spawn(move || {
                        let ran = run(case, &name);
                        (name, ran)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| panic!("a run panicked")))
                .collect()
        });
        for (name, (crashed, repeated)) in results {
            assert!(
                repeated.is_empty(),
                "{name}: a call was repeated: {repeated:?}"
            );
            assert_eq!(
                &crashed, clean,
                "{name}: the crashed run ended unlike the clean run"
            );
        }
    }
}
