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
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|p| p.parse().ok())
        {
            // Keep draining its output so it never blocks on a full pipe.
            std::thread::spawn(move || while receive.recv().is_ok() {});
            if let Some(mut e) = child.stderr.take() {
                std::thread::spawn(move || {
                    let mut sink = Vec::new();
                    let _ = e.read_to_end(&mut sink);
                });
            }
            return Ok(Dev { child, port });
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    Err("jadpo did not start within 30 s".into())
}

impl Dev {
    /// One request; `None` when the connection broke (the process died).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Option<(u16, String)> {
        let mut text = format!(
            "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            text.push_str(&format!("{k}: {v}\r\n"));
        }
        text.push_str("\r\n");
        text.push_str(body);
        self.raw(text.as_bytes())
            .map(|(status, _, body)| (status, body))
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
