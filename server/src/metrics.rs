//! Metrics and the no-setup alert (design `server.md` section 21), in
//! Prometheus's text format from a registry of our own (prometheus-client
//! has no global one). Labels come from the plan (actions, entries,
//! routes, operations, schedules, stores), never from ids. The store's
//! gauges refresh every 15 s; while an operator item is open, or the
//! oldest unfinished record is older than `--alert-after`, the alert's
//! gauge is 1 and a WARN names the count, the oldest age and the command
//! to list them, every 10 minutes.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use jadpo_runtime::store::DeliveryState;

type Labels = Vec<(String, String)>;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Every metric a server keeps.
pub struct Metrics {
    registry: Mutex<Registry>,
    deliveries: Family<Labels, Counter>,
    route_requests: Family<Labels, Counter>,
    route_replays: Family<Labels, Counter>,
    route_duration: Family<Labels, Histogram>,
    step_duration: Family<Labels, Histogram>,
    lag: Family<Labels, Histogram>,
    rescues: Counter,
    lease_lost: Counter,
    ticks: Family<Labels, Counter>,
    unfinished: Family<Labels, Gauge>,
    oldest: Family<Labels, Gauge<f64, AtomicU64>>,
    items: Family<Labels, Gauge>,
    alert: Family<Labels, Gauge>,
    build: Family<Labels, Gauge>,
}

/// From a millisecond to an hour: a delivery's wait ranges from the next
/// claim to a schedule's tick caught up after a stop.
fn lag_histogram() -> Histogram {
    Histogram::new([
        0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0, 600.0, 3600.0,
    ])
}

fn route_histogram() -> Histogram {
    Histogram::new([
        0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
    ])
}

impl Metrics {
    pub fn new(build_id: &str) -> Arc<Metrics> {
        let m = Metrics {
            registry: Mutex::new(Registry::default()),
            deliveries: Family::default(),
            route_requests: Family::default(),
            route_replays: Family::default(),
            route_duration: Family::new_with_constructor(route_histogram),
            step_duration: Family::new_with_constructor(route_histogram),
            lag: Family::new_with_constructor(lag_histogram),
            rescues: Counter::default(),
            lease_lost: Counter::default(),
            ticks: Family::default(),
            unfinished: Family::default(),
            oldest: Family::default(),
            items: Family::default(),
            alert: Family::default(),
            build: Family::default(),
        };
        if let Ok(mut r) = m.registry.lock() {
            r.register(
                "jadpo_deliveries",
                "Attempts that ended their delivery, by action, entry and outcome",
                m.deliveries.clone(),
            );
            r.register(
                "jadpo_route_requests",
                "Route requests answered, by route and status",
                m.route_requests.clone(),
            );
            r.register(
                "jadpo_route_replays",
                "Stored answers replayed, by route",
                m.route_replays.clone(),
            );
            r.register(
                "jadpo_route_duration_seconds",
                "Time to answer a route request",
                m.route_duration.clone(),
            );
            r.register(
                "jadpo_step_duration_seconds",
                "Time a provider took to answer a step's send, by operation and result",
                m.step_duration.clone(),
            );
            r.register(
                "jadpo_delivery_lag_seconds",
                "How long each delivery the dispatcher claimed from the queue waited after it was due",
                m.lag.clone(),
            );
            r.register(
                "jadpo_rescues",
                "Deliveries taken over after their runner's lease lapsed",
                m.rescues.clone(),
            );
            r.register(
                "jadpo_lease_lost",
                "Attempts stopped because another runner took their lease",
                m.lease_lost.clone(),
            );
            r.register(
                "jadpo_schedule_ticks",
                "Schedule ticks offered, by schedule and result",
                m.ticks.clone(),
            );
            r.register(
                "jadpo_unfinished_records",
                "Records not yet committed, by store",
                m.unfinished.clone(),
            );
            r.register(
                "jadpo_unfinished_record_oldest_age_seconds",
                "Age of the oldest unfinished record, by store",
                m.oldest.clone(),
            );
            r.register(
                "jadpo_operator_items",
                "Open operator items, by outcome",
                m.items.clone(),
            );
            r.register("jadpo_alert", "1 while the alert fires", m.alert.clone());
            r.register(
                "jadpo_build_info",
                "The build this process runs",
                m.build.clone(),
            );
        }
        m.build
            .get_or_create(&labels(&[("build_id", build_id)]))
            .set(1);
        m.alert
            .get_or_create(&labels(&[("alert", "unfinished")]))
            .set(0);
        Arc::new(m)
    }

    /// The text a scrape reads.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if let Ok(r) = self.registry.lock() {
            let _ = encode(&mut out, &r);
        }
        out
    }

    pub fn delivery_ended(&self, action: &str, entry: &str, outcome: &str) {
        self.deliveries
            .get_or_create(&labels(&[
                ("action", action),
                ("entry", entry),
                ("outcome", outcome),
            ]))
            .inc();
    }

    pub fn route_answered(&self, route: &str, status: u16, seconds: f64, replayed: bool) {
        let route_label = labels(&[("route", route)]);
        self.route_requests
            .get_or_create(&labels(&[
                ("route", route),
                ("status", &status.to_string()),
            ]))
            .inc();
        self.route_duration
            .get_or_create(&route_label)
            .observe(seconds);
        if replayed {
            self.route_replays.get_or_create(&route_label).inc();
        }
    }

    /// One send to a provider; `result` is how it came back (`answered`,
    /// `failed`, `unavailable`, `server_error`, `lost`, ...).
    pub fn step_sent(&self, operation: &str, result: &str, seconds: f64) {
        self.step_duration
            .get_or_create(&labels(&[("operation", operation), ("result", result)]))
            .observe(seconds);
    }

    /// A delivery claimed from `queue`, `seconds` after it was due.
    pub fn claimed(&self, queue: &str, seconds: f64) {
        self.lag
            .get_or_create(&labels(&[("queue", queue)]))
            .observe(seconds.max(0.0));
    }

    pub fn rescued(&self) {
        self.rescues.inc();
    }

    pub fn lease_lost(&self) {
        self.lease_lost.inc();
    }

    pub fn ticked(&self, schedule: &str, inserted: bool) {
        let result = if inserted { "inserted" } else { "taken" };
        self.ticks
            .get_or_create(&labels(&[("schedule", schedule), ("result", result)]))
            .inc();
    }
}

/// How old the oldest unfinished record may get before the alert fires
/// (`--alert-after`).
pub const ALERT_AFTER: Duration = Duration::from_secs(3600);

impl Metrics {
    /// A store's gauges: its unfinished records and the oldest's age.
    pub fn store_gauges(&self, store: &str, records: usize, oldest: f64) {
        let store_label = labels(&[("store", store)]);
        self.unfinished
            .get_or_create(&store_label)
            .set(records as i64);
        self.oldest.get_or_create(&store_label).set(oldest);
    }

    /// The app's open operator items by ending, and the alert's state.
    pub fn item_gauges(&self, open: &[(DeliveryState, usize)], firing: bool) {
        for (state, count) in open {
            self.items
                .get_or_create(&labels(&[("outcome", state.as_str())]))
                .set(*count as i64);
        }
        self.alert
            .get_or_create(&labels(&[("alert", "unfinished")]))
            .set(i64::from(firing));
    }
}

/// `jadpo alerts prometheus`: rules matching the metrics.
pub const PROMETHEUS_RULES: &str = r#"groups:
  - name: jadpo
    rules:
      - alert: JadpoUnfinishedWork
        expr: max(jadpo_alert{alert="unfinished"}) > 0
        for: 5m
        labels:
          severity: warning
        annotations:
          summary: "jadpo has unfinished work an operator must look at"
          description: "Open operator items or an old unfinished record. List them: jadpo deliveries list --not-done"
      - alert: JadpoOldUnfinishedRecord
        expr: max(jadpo_unfinished_record_oldest_age_seconds) > 3600
        for: 5m
        labels:
          severity: warning
        annotations:
          summary: "a jadpo record has been unfinished for over an hour"
          description: "jadpo deliveries list --not-done"
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_has_the_build_and_the_alert() {
        let m = Metrics::new("abc");
        m.route_answered("POST /x", 200, 0.003, false);
        m.delivery_ended("subscribe", "route POST /x", "completed");
        let text = m.text();
        assert!(
            text.contains("jadpo_build_info{build_id=\"abc\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("jadpo_alert{alert=\"unfinished\"} 0"),
            "{text}"
        );
        assert!(
            text.contains("jadpo_route_requests_total{route=\"POST /x\",status=\"200\"} 1"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
