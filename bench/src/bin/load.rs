//! The load client of `scripts/load.sh` (design `server.md` section 25):
//! keep-alive HTTP/1.1 connections to a server on 127.0.0.1 sending one
//! route's request, each with its own Idempotency-Key (or, with
//! `--replay`, the keys of an earlier run, so every answer is a stored
//! one), bounded by `--seconds` and `--max` and stopping itself. With
//! `--rate`, requests are paced to that many per second in all; without,
//! each connection sends its next request when the last is answered.
//! Prints one JSON line: requests, seconds, per second, p50/p99 in ms and
//! the statuses. `LOAD_SLOW_MS=N` also prints each request that took N ms
//! or more on standard error (`slow SENT_MS TOOK_MS`, sent that many ms
//! after the start), to see when the slow ones come.
//!
//!   load --port 8080 --path /subscriptions --body '{...}' \
//!        [--connections 16] [--seconds 60] [--max 200000] [--rate 0] \
//!        [--keys run1] [--replay]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Args {
    port: u16,
    path: String,
    body: String,
    connections: u64,
    seconds: f64,
    max: u64,
    rate: f64,
    keys: String,
    replay: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        port: 0,
        path: "/subscriptions".into(),
        body: String::new(),
        connections: 16,
        seconds: 60.0,
        max: 200_000,
        rate: 0.0,
        keys: "load".into(),
        replay: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--replay" {
            a.replay = true;
            continue;
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |_: String| format!("{flag} {value}: not a number");
        match flag.as_str() {
            "--port" => a.port = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--path" => a.path = value,
            "--body" => a.body = value,
            "--connections" => a.connections = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--seconds" => a.seconds = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--max" => a.max = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--rate" => a.rate = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--keys" => a.keys = value,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    // Bounded whatever is asked: at most 10 minutes and 10 million requests.
    a.seconds = a.seconds.clamp(0.1, 600.0);
    a.max = a.max.clamp(1, 10_000_000);
    a.connections = a.connections.clamp(1, 512);
    if a.port == 0 {
        return Err("--port is required".into());
    }
    Ok(a)
}

/// One connection's requests; (latency in µs, status) of each.
fn connection(a: &Args, n: u64, sent: &AtomicU64, start: Instant) -> Vec<(u64, u16)> {
    let mut out = Vec::new();
    let Ok(stream) = TcpStream::connect(("127.0.0.1", a.port)) else {
        return out;
    };
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(_) => return out,
    };
    let mut reader = BufReader::new(stream);
    let deadline = start + Duration::from_secs_f64(a.seconds);
    let mut own = 0u64;
    let slow: Option<u128> = std::env::var("LOAD_SLOW_MS")
        .ok()
        .and_then(|v| v.parse().ok());
    loop {
        let i = sent.fetch_add(1, Ordering::Relaxed);
        if i >= a.max || Instant::now() >= deadline {
            return out;
        }
        if a.rate > 0.0 {
            // Request i leaves at i / rate seconds after the start.
            let due = start + Duration::from_secs_f64(i as f64 / a.rate);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        // A replay run sends the keys a first run sent, connection by
        // connection, so each is answered from its stored response.
        let key = format!("{}-{n}-{own}", a.keys);
        own += 1;
        let request = format!(
            "POST {} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nidempotency-key: {key}\r\ncontent-length: {}\r\n\r\n{}",
            a.path,
            a.body.len(),
            a.body
        );
        let sent_at = Instant::now();
        if writer.write_all(request.as_bytes()).is_err() {
            return out;
        }
        let Some(status) = answer(&mut reader) else {
            return out;
        };
        let took = sent_at.elapsed();
        if slow.is_some_and(|ms| took.as_millis() >= ms) {
            // `LOAD_SLOW_MS`: each slow request on standard error, when it
            // was sent (ms after the start) and how long it took.
            let at = sent_at.duration_since(start).as_millis();
            eprintln!("slow {at} {}", took.as_millis());
        }
        out.push((took.as_micros() as u64, status));
    }
}

/// Reads one answer; its status.
fn answer(reader: &mut BufReader<TcpStream>) -> Option<u16> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let status = line.split(' ').nth(1)?.parse().ok()?;
    let mut length = 0usize;
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0u8; length.min(1 << 20)];
    reader.read_exact(&mut body).ok()?;
    Some(status)
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(at).copied().unwrap_or(0) as f64 / 1000.0
}

fn main() {
    let a = match args() {
        Ok(a) => Arc::new(a),
        Err(why) => {
            eprintln!("load: {why}");
            std::process::exit(2);
        }
    };
    let sent = Arc::new(AtomicU64::new(0));
    let all = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now();
    let threads: Vec<_> = (0..a.connections)
        .map(|n| {
            let (a, sent, all) = (a.clone(), sent.clone(), all.clone());
            std::thread::spawn(move || {
                let mine = connection(&a, n, &sent, start);
                if let Ok(mut all) = all.lock() {
                    all.extend(mine);
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
    let seconds = start.elapsed().as_secs_f64();
    let all = all.lock().map(|a| a.clone()).unwrap_or_default();
    let mut latencies: Vec<u64> = all.iter().map(|(l, _)| *l).collect();
    latencies.sort_unstable();
    let mut statuses: BTreeMap<String, u64> = BTreeMap::new();
    for (_, s) in &all {
        *statuses.entry(s.to_string()).or_default() += 1;
    }
    let doc = serde_json::json!({
        "requests": all.len(),
        "seconds": (seconds * 100.0).round() / 100.0,
        "per_second": (all.len() as f64 / seconds).round(),
        "p50_ms": percentile(&latencies, 0.5),
        "p99_ms": percentile(&latencies, 0.99),
        "statuses": statuses,
    });
    println!("{doc}");
}
