//! What `jadpo dev` prints per attempt (design section 23): a header, each
//! step, and the end; never a body or an answer. `serve` logs the same
//! facts as JSON lines.

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

use jadpo_runtime::delivery::ListedStep;

/// One attempt, as it is shown.
#[derive(Clone, Debug)]
pub struct Shown {
    /// `POST /subscriptions → subscribe`, `subscriber start_subscription →
    /// subscribe_requested`, `schedule nightly → check`.
    pub header: String,
    pub delivery: String,
    /// A client key's first 6 hex characters of BLAKE3.
    pub key: Option<String>,
    pub steps: Vec<ListedStep>,
    /// `committed: 1 write, 1 event`, `retry at 10:02:41: ...`, or the
    /// ending's text.
    pub end: String,
    /// A route's status.
    pub status: Option<u16>,
    pub ms: u64,
    /// Whether it ended the delivery (committed or another end).
    pub ended: bool,
}

/// A step as it happens: sent, answered (or not), or replayed.
#[derive(Clone, Debug)]
pub struct LiveStep<'a> {
    pub position: u32,
    pub operation: &'a str,
    /// `sent`, `answered`, `failed`, `replayed`, `no answer`, ...
    pub state: &'a str,
    /// The answer's id, or the failure.
    pub detail: String,
    /// The provider key's first characters, on `sent`.
    pub key: Option<&'a str>,
    /// How long the send took, once it came back.
    pub ms: Option<u64>,
}

pub trait Listen: Send + Sync {
    /// Whether it shows steps as they happen (else `step` is not called,
    /// and nothing is computed for it).
    fn live(&self) -> bool {
        false
    }
    /// An attempt starts: its header, printed before its steps.
    fn begin(&self, _header: &str, _delivery: &str, _key: Option<&str>) {}
    /// One of its steps, as it happens.
    fn step(&self, _step: &LiveStep<'_>) {}
    /// The attempt ended (a human listing has shown its steps already).
    fn shown(&self, attempt: &Shown);
    /// A line about the server itself (start, reload, shutdown).
    fn note(&self, line: &str);
}

/// Prints nothing (tests).
pub struct Quiet;

impl Listen for Quiet {
    fn shown(&self, _: &Shown) {}
    fn note(&self, _: &str) {}
}

/// Human lines on a writer (standard output).
pub struct Human<W: Write + Send>(pub Mutex<W>);

/// JSON lines on a writer.
pub struct JsonLines<W: Write + Send>(pub Mutex<W>);

fn clock_text() -> String {
    let now = crate::store::clock::now();
    let text = jadpo_runtime::value::instant_text(now);
    text.get(11..19).unwrap_or("").to_string()
}

impl<W: Write + Send> Human<W> {
    fn write(&self, text: &str) {
        if let Ok(mut w) = self.0.lock() {
            let _ = w.write_all(text.as_bytes());
            let _ = w.flush();
        }
    }
}

impl<W: Write + Send> Listen for Human<W> {
    fn live(&self) -> bool {
        true
    }

    fn begin(&self, header: &str, delivery: &str, key: Option<&str>) {
        let key = key.map(|k| format!("  key {k}…")).unwrap_or_default();
        self.write(&format!("{} {header}  {delivery}{key}\n", clock_text()));
    }

    fn step(&self, s: &LiveStep<'_>) {
        let key = s
            .key
            .map(|k| format!("  key {}…", k.get(..6).unwrap_or(k)))
            .unwrap_or_default();
        let detail: String = s.detail.chars().take(24).collect();
        let ms = s.ms.map(|ms| format!("  {ms} ms")).unwrap_or_default();
        let gap = if detail.is_empty() { "" } else { " " };
        self.write(&format!(
            "  {:>2} {:<34} {:<9}{gap}{detail}{key}{ms}\n",
            s.position, s.operation, s.state
        ));
    }

    fn shown(&self, a: &Shown) {
        // A step judged without a send (held in doubt) had no live line.
        let mut out = String::new();
        for s in a
            .steps
            .iter()
            .filter(|s| s.state == "in doubt" && s.detail.is_empty())
        {
            out.push_str(&format!(
                "  {:>2} {:<34} {}\n",
                s.position, s.operation, s.state
            ));
        }
        let status = a.status.map(|s| format!("  {s}")).unwrap_or_default();
        out.push_str(&format!("  {}{status}  {} ms\n", a.end, a.ms));
        self.write(&out);
    }

    fn note(&self, line: &str) {
        if let Ok(mut w) = self.0.lock() {
            let _ = writeln!(w, "{line}");
            let _ = w.flush();
        }
    }
}

impl<W: Write + Send> Listen for JsonLines<W> {
    fn shown(&self, a: &Shown) {
        let steps: Vec<serde_json::Value> = a
            .steps
            .iter()
            .map(|s| {
                serde_json::json!({
                    "position": s.position,
                    "operation": s.operation,
                    "state": s.state.to_string(),
                })
            })
            .collect();
        let line = serde_json::json!({
            "kind": "attempt",
            "entry": a.header,
            "delivery": a.delivery,
            "key": a.key,
            "steps": steps,
            "end": a.end,
            "status": a.status,
            "ms": a.ms,
        });
        if let Ok(mut w) = self.0.lock() {
            let _ = writeln!(w, "{line}");
            let _ = w.flush();
        }
    }

    fn note(&self, line: &str) {
        let line = serde_json::json!({ "kind": "note", "text": line });
        if let Ok(mut w) = self.0.lock() {
            let _ = writeln!(w, "{line}");
            let _ = w.flush();
        }
    }
}

/// Failures said at most once a minute each store: a store down for an
/// hour is polled every second by a dispatcher and every 15 s by the
/// gauges, and another store's failure is still said when it comes.
#[derive(Default)]
pub struct Said {
    /// By store: when its failure was last said, and how many since were
    /// not.
    stores: std::collections::BTreeMap<String, (std::time::Instant, u32)>,
}

/// A bound on the stores [`Said`] remembers (an app has a few).
const SAID_STORES: usize = 64;

impl Said {
    /// The line to say for store `store`'s failure at `now`, if any.
    fn failed(&mut self, store: &str, what: String, now: std::time::Instant) -> Option<String> {
        if let Some((at, quiet)) = self.stores.get_mut(store) {
            if now.duration_since(*at) < Duration::from_secs(60) {
                *quiet += 1;
                return None;
            }
        }
        let more = match self.stores.remove(store) {
            Some((_, n)) if n > 0 => format!(" ({n} more failures since the last said)"),
            _ => String::new(),
        };
        if self.stores.len() >= SAID_STORES {
            self.stores.clear();
        }
        self.stores.insert(store.to_string(), (now, 0));
        Some(format!("{what}{more}"))
    }

    pub fn say(&mut self, listing: &dyn Listen, store: &str, what: String) {
        if let Some(line) = self.failed(store, what, std::time::Instant::now()) {
            listing.note(&line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Said;
    use std::time::{Duration, Instant};

    #[test]
    fn failures_are_said_at_most_once_a_minute_each_store() {
        let mut said = Said::default();
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        assert_eq!(said.failed("a", "a down".into(), t0), Some("a down".into()));
        for s in 1..30 {
            assert_eq!(said.failed("a", "a down".into(), at(s)), None);
        }
        // Another store's failure is said when it comes.
        assert_eq!(
            said.failed("b", "b down".into(), at(30)),
            Some("b down".into())
        );
        assert_eq!(said.failed("b", "b down".into(), at(31)), None);
        assert_eq!(
            said.failed("a", "a still".into(), at(61)),
            Some("a still (29 more failures since the last said)".into())
        );
        assert_eq!(
            said.failed("a", "a again".into(), at(200)),
            Some("a again".into())
        );
    }
}
