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
#   - the same keys again: stored-response replays, p50/p99;
#   - new keys paced at 1,000 requests/s: p50/p99 at that rate.
# Writes the table to target/bench/load.md and into BENCHMARKS.md between
# its `load.sh` markers.
#   LOAD_SECONDS=60 (each run; CI: 10)   LOAD_PROFILE=release|debug
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

# serve STORE_URL: starts the server; sets $server and $port.
serve() {
    : > "$work/out"
    JADPO_STORE_PRIMARY="$1" STEPS_KEY=load-key BASIC_PRICE=price_basic \
        JADPO_API_KEYS="load:$(printf 'load' | sha256sum | cut -d' ' -f1)" \
        "$bin/jadpo" serve "$work/build" --listen 127.0.0.1:0 --metrics-listen "" \
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

# Every answer of a run must be a 200: anything else is a failure of the run.
all_ok() {
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if list(d["statuses"]) == ["200"] and d["requests"] > 0 else 1)' "$1"
}

rows=()
measure() {
    local label="$1" url="$2"
    serve "$url"
    local keyed replayed paced n
    keyed="$("$bin/load" --port "$port" --path /refunds --body "$body" --seconds "$secs" --keys "k" --connections 16)"
    n="$(field "$keyed" requests)"
    replayed="$("$bin/load" --port "$port" --path /refunds --body "$body" --seconds "$secs" --keys "k" --connections 16 --max "$n" --replay)"
    paced="$("$bin/load" --port "$port" --path /refunds --body "$body" --seconds "$secs" --keys "p" --connections 32 --rate 1000)"
    stop
    echo "$label keyed:    $keyed"
    echo "$label replayed: $replayed"
    echo "$label paced:    $paced"
    for run in "$keyed" "$replayed" "$paced"; do
        if ! all_ok "$run"; then
            echo "load.sh: $label: a run had answers other than 200 (or none): $run" >&2
            tail -20 "$work/out" >&2
            exit 1
        fi
    done
    rows+=("| $label | $(field "$keyed" per_second) | $(field "$keyed" p50_ms) / $(field "$keyed" p99_ms) ms | $(field "$replayed" per_second) | $(field "$replayed" p50_ms) / $(field "$replayed" p99_ms) ms | $(field "$paced" per_second) | $(field "$paced" p50_ms) / $(field "$paced" p99_ms) ms | $(field "$keyed" statuses) |")
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
    echo "| store | route runs/s, 16 connections | p50 / p99 | replays/s | replay p50 / p99 | paced at 1,000/s: achieved | p50 / p99 | statuses |"
    echo "|---|---|---|---|---|---|---|---|"
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
