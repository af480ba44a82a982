#!/usr/bin/env bash
# LSP latency: time from `didChange` to `publishDiagnostics` in `jadpo lsp`
# on a generated app (default 100k lines), as p50/p95/max over N edits.
#
#   scripts/lsp_latency.sh [LINES] [EDITS]
#
# Builds release binaries, generates the corpus with jadpo-bench's
# gen_corpus (seed 1) into a temporary folder, and runs bench/src/bin/lsp_latency.rs.
# Set JADPO_LSP_TIMING=1 to have the server print its per-phase times.
set -euo pipefail
lines="${1:-100k}"
edits="${2:-200}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release -q -p jadpo --bin jadpo -p jadpo-bench --bin lsp_latency
cargo build --release -q -p jadpo-bench --bin gen_corpus
app="$(mktemp -d "${TMPDIR:-/tmp}/jadpo-lsp-latency.XXXXXX")"
trap 'rm -rf "$app"' EXIT
./target/release/gen_corpus --lines "$lines" --out "$app/app"
./target/release/lsp_latency --app "$app/app" --edits "$edits" --jadpo ./target/release/jadpo
