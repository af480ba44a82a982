#!/usr/bin/env bash
# The server's load run (design server.md sections 25 and 26), on 127.0.0.1
# only: `jadpo serve` of examples/billing with the journaled fakes of its
# `dev` fixture (no provider is called), on SQLite and, when JADPO_TEST_PG
# is set (run it through scripts/with-postgres.sh), on Postgres; the
# client of bench/src/bin/load.rs, bounded in time and requests, stops
# itself. Measures, per store:
#   - POST /refunds (one keyed Stripe step, the design's "route with one
#     keyed step"), each with a new Idempotency-Key, 16 connections
#     unpaced: route runs/s, p50/p99;
#   - the same keys again: stored-response replays unpaced, p50/p99, and
#     paced at 1,000/s (the route row's rate), p50/p99;
#   - new keys paced at 1,000 requests/s: p50/p99 at that rate;
#   - POST /subscriptions/requests paced at 200/s (each stages an event whose
#     subscriber's delivery a dispatcher claims): event to delivery start,
#     p50/p99, from the jadpo_delivery_lag_seconds histogram (the deliveries
#     themselves fault on the fakes' one subscription id; their start is
#     what is measured).
# Writes the table to target/bench/load.md and into BENCHMARKS.md between
# its `load.sh` markers.
#   LOAD_SECONDS=60 (each run; CI: 5)   LOAD_PROFILE=release|debug
#   LOAD_WRITE=0 leaves BENCHMARKS.md alone
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${LOAD_SECONDS:-60}"
profile="${LOAD_PROFILE:-release}"
if [ "$profile" = release ]; then
    cargo build --release -q -p jadpo -p jadpo-bench --bin jadpo --bin load
else
    cargo build -q -p jadpo-bench --bin load
fi
bin="${CARGO_TARGET_DIR:-target}/$profile"
work="$(mktemp -d /tmp/jadpo-load.XXXXXX)"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$bin/jadpo" build examples/billing --out "$work/build" >/dev/null
body='{"charge":"ch_1"}'
request='{"email":"ada@example.com","price":"price_basic","payment_method":"pm_1"}'

# A free port for /metrics (the server does not print where it listens).
metrics="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
scrape() { curl -s "http://127.0.0.1:$metrics/metrics"; }

# lag BEFORE AFTER: p50 and p99 in ms of the deliveries claimed from queue
# `default` between two scrapes, interpolated within the histogram's
# buckets as Prometheus's histogram_quantile does.
lag() {
    python3 - "$1" "$2" <<'PY'
import re, sys
def buckets(text):
    out = {}
    for m in re.finditer(r'jadpo_delivery_lag_seconds_bucket\{le="([^"]+)",queue="default"\} (\d+)', text):
        out[float(m.group(1))] = int(m.group(2))
    return out
a, b = buckets(open(sys.argv[1]).read()), buckets(open(sys.argv[2]).read())
les = sorted(b)
counts = [b[le] - a.get(le, 0) for le in les]
total = counts[-1] if counts else 0
def q(p):
    if total == 0:
        return float("nan")
    rank, prev_le, prev_n = p * total, 0.0, 0
    for le, n in zip(les, counts):
        if n >= rank:
            if le == float("inf"):
                return prev_le * 1000
            return (prev_le + (le - prev_le) * (rank - prev_n) / max(n - prev_n, 1)) * 1000
        prev_le, prev_n = le, n
    return prev_le * 1000
print(f"{q(0.5):.2f} / {q(0.99):.2f} ms ({total} deliveries)")
PY
}

# replays BEFORE AFTER: stored-response replays of POST /refunds between
# two scrapes.
replays() {
    python3 - "$1" "$2" <<'PY2'
import re, sys
def count(path):
    m = re.search(r'jadpo_route_replays_total\{route="POST /refunds"\} (\d+)', open(path).read())
    return int(m.group(1)) if m else 0
print(count(sys.argv[2]) - count(sys.argv[1]))
PY2
}

# serve STORE_URL: starts the server; sets $server and $port.
serve() {
    : > "$work/out"
    JADPO_STORE_PRIMARY="$1" STEPS_KEY=load-key BASIC_PRICE=price_basic \
        JADPO_API_KEYS="load:$(printf 'load' | sha256sum | cut -d' ' -f1)" \
        "$bin/jadpo" serve "$work/build" --listen 127.0.0.1:0 --metrics-listen "127.0.0.1:$metrics" \
        --fakes dev --fakes-journal "$work/fakes.jsonl" --log human >"$work/out" 2>&1 &
    server=$!
    port=""
    for _ in $(seq 1 300); do
        port="$(sed -n 's/.*http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/out" | head -1)"
        [ -n "$port" ] && return 0
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    echo "load.sh: the server did not start:" >&2
    cat "$work/out" >&2
    exit 2
}

stop() {
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=""
}

# field JSON KEY: one figure of a client's line (whole numbers without ".0",
# statuses as "200: n").
field() {
    python3 -c '
import json, sys
v = json.loads(sys.argv[1])[sys.argv[2]]
if isinstance(v, dict):
    print(", ".join(f"{k}: {n}" for k, n in v.items()))
elif isinstance(v, float) and v.is_integer():
    print(int(v))
else:
    print(v)' "$1" "$2"
}

# all_ok RUN STATUS: every answer of a run must be STATUS (200, or 202 for
# a staged event); anything else is a failure of the run.
all_ok() {
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if list(d["statuses"]) == [sys.argv[2]] and d["requests"] > 0 else 1)' "$1" "$2"
}

rows=()
measure() {
    local label="$1" url="$2"
    serve "$url"
    local keyed replayed paced n
    keyed="$("$bin/load" --port "$port" --path /refunds --body "$body" --seconds "$secs" --keys "k" --connections 16)"
    n="$(field "$keyed" requests)"
    replayed="$("$bin/load" --port "$port" --path /refunds --body "$body" --seconds "$secs" --keys "k" --connections 16 --max "$n" --replay)"
    # Replays at the route row's rate: latency, not the queue of an
    # unpaced run. Each connection sends at most its share of n / 16 in
    # the keyed run (the keyed run sent each connection's keys in order),
    # and the server's replay counter must count every request.
    scrape > "$work/before"
    replay_paced="$("$bin/load" --port "$port" --path /refunds --body "$body" --seconds "$secs" --keys "k" --connections 16 --max "$((n / 2))" --rate 1000 --replay)"
    scrape > "$work/after"
    replays="$(replays "$work/before" "$work/after")"
    if [ "$replays" != "$(field "$replay_paced" requests)" ]; then
        echo "load.sh: $label: $replays of $(field "$replay_paced" requests) paced replays were replays" >&2
        exit 1
    fi
    paced="$("$bin/load" --port "$port" --path /refunds --body "$body" --seconds "$secs" --keys "p" --connections 32 --rate 1000)"
    scrape > "$work/before"
    events="$("$bin/load" --port "$port" --path /subscriptions/requests --body "$request" --seconds "$secs" --keys "e" --connections 8 --rate 200)"
    sleep 2
    scrape > "$work/after"
    started="$(lag "$work/before" "$work/after")"
    stop
    echo "$label events:   $events; started $started"
    echo "$label keyed:    $keyed"
    echo "$label replayed: $replayed"
    echo "$label replayed at 1,000/s: $replay_paced"
    echo "$label paced:    $paced"
    for run in "$keyed 200" "$replayed 200" "$replay_paced 200" "$paced 200" "$events 202"; do
        if ! all_ok "${run% *}" "${run##* }"; then
            echo "load.sh: $label: a run had other answers (or none): $run" >&2
            tail -20 "$work/out" >&2
            exit 1
        fi
    done
    rows+=("| $label | $(field "$keyed" per_second) | $(field "$keyed" p50_ms) / $(field "$keyed" p99_ms) ms | $(field "$replayed" per_second) | $(field "$replayed" p50_ms) / $(field "$replayed" p99_ms) ms | $(field "$replay_paced" p50_ms) / $(field "$replay_paced" p99_ms) ms | $(field "$paced" per_second) | $(field "$paced" p50_ms) / $(field "$paced" p99_ms) ms | $started | $(field "$keyed" statuses) |")
}

measure "SQLite" "sqlite:$work/load.sqlite"
if [ -n "${JADPO_TEST_PG:-}" ]; then
    measure "Postgres" "$JADPO_TEST_PG"
fi

mkdir -p target/bench
{
    echo "<!-- load.sh -->"
    echo "\`scripts/load.sh\`, $(date -u +%Y-%m-%d), $secs s a run, $(nproc) cores, $profile build: POST /refunds of examples/billing (one keyed Stripe step) on \`jadpo serve\` with the \`dev\` fakes."
    echo
    echo "| store | route runs/s, 16 connections | p50 / p99 | replays/s | replay p50 / p99 | replay at 1,000/s, p50 / p99 | paced at 1,000/s: achieved | p50 / p99 | event to delivery start, p50 / p99 | statuses |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo "<!-- /load.sh -->"
} > target/bench/load.md
cat target/bench/load.md
if [ "${LOAD_WRITE:-1}" = 1 ] && grep -q '<!-- load.sh -->' BENCHMARKS.md; then
    python3 - <<'PY'
import os, re
text = open("BENCHMARKS.md").read()
new = open("target/bench/load.md").read().rstrip("\n")
out = re.sub(r"<!-- load.sh -->.*?<!-- /load.sh -->", lambda m: new, text, flags=re.S)
tmp = "BENCHMARKS.md.tmp"
open(tmp, "w").write(out)
os.replace(tmp, "BENCHMARKS.md")
PY
fi
