#!/usr/bin/env bash
# jadpo's benchmark, one command: builds the release binaries, generates the
# corpora (deterministic from a seed), and reports for each size the phase
# timings (lexing alone, parsing, resolution, the step analyzer), the wall
# time and peak memory of the whole `jadpo check`, and, in the same session,
# `ruff check --no-cache` on CPython's standard library for comparison.
#
# Usage: scripts/bench.sh                 # sizes 10k 100k 1m
#        SIZES="10k 100k" scripts/bench.sh
#        RUNS=10 SEED=7 scripts/bench.sh
#
# Needs: cargo, hyperfine, /usr/bin/time (package `time`), ruff (pip), python3.
# Results: printed, and written to target/bench/results.md.
set -euo pipefail

cd "$(dirname "$0")/.."
SIZES=${SIZES:-"10k 100k 1m"}
SEED=${SEED:-1}
RUNS=${RUNS:-5}
OUT=target/bench
CORPORA=target/bench-corpus
mkdir -p "$OUT" "$CORPORA"

need() {
    command -v "$1" >/dev/null 2>&1 || { echo "bench.sh: needs $1 ($2)" >&2; exit 2; }
}
need cargo "rustup"
need hyperfine "apt-get install -y hyperfine"
need python3 "the machine's CPython"
[ -x /usr/bin/time ] || { echo "bench.sh: needs /usr/bin/time (apt-get install -y time)" >&2; exit 2; }

echo "== building release binaries"
cargo build --release -q -p jadpo -p jadpo-bench
JADPO=target/release/jadpo
GEN=target/release/gen_corpus
BENCH=target/release/bench

# Seconds (mean) of a hyperfine JSON export.
mean_of() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"])' "$1"
}
# Peak resident memory in MiB of one run of a command.
peak_mib() {
    # The command's own exit status (1 when it finds problems) is not ours.
    { /usr/bin/time -v "$@" 2>&1 >/dev/null || true; } |
        awk '/Maximum resident set size/ {printf "%.0f", $6 / 1024}'
}
# `key=value` from the bench binary's output.
value_of() {
    awk -F= -v k="$1" '$1 == k {print $2}' "$2"
}

{
    echo "# jadpo benchmark results"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "- machine: $(nproc) cores, $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- jadpo: $(git rev-parse --short HEAD 2>/dev/null || echo unknown) (working tree may differ), seed $SEED, runs $RUNS"
    echo
    echo "| size | lines | MB | lex 1 thread (lines/s) | lex (lines/s) | parse (lines/s) | resolve (lines/s) | check (lines/s) | whole \`jadpo check\` wall | whole (lines/s) | peak MiB | check / lex 1 thread | check / lex all threads | diagnostics |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$OUT/results.md"

declare -A WALL LINES
for size in $SIZES; do
    dir="$CORPORA/$size"
    echo "== corpus $size"
    "$GEN" --lines "$size" --seed "$SEED" --out "$dir"
    summary=$("$JADPO" check "$dir" --color never 2>&1 | tail -n 1 || true)
    echo "   $summary"
    echo "== phases ($size)"
    phase_runs=$RUNS
    [ "$size" = "1m" ] && phase_runs=$(( RUNS < 3 ? RUNS : 3 ))
    "$BENCH" "$dir" --runs "$phase_runs" | tee "$OUT/phases-$size.txt"
    echo "== whole jadpo check ($size)"
    hyperfine -N --warmup 1 --runs "$RUNS" -i --export-json "$OUT/check-$size.json" \
        "$JADPO check $dir --color never"
    wall=$(mean_of "$OUT/check-$size.json")
    peak=$(peak_mib "$JADPO" check "$dir" --color never)
    f="$OUT/phases-$size.txt"
    lines=$(value_of lines "$f")
    bytes=$(value_of bytes "$f")
    WALL[$size]=$wall
    LINES[$size]=$lines
    python3 - "$size" "$lines" "$bytes" "$wall" "$peak" "$summary" \
        "$(value_of lex_1t_ms "$f")" "$(value_of lex_ms "$f")" "$(value_of parse_ms "$f")" \
        "$(value_of resolve_ms "$f")" "$(value_of check_ms "$f")" >>"$OUT/results.md" <<'EOF'
import sys
size, lines, bytes_, wall, peak, summary = sys.argv[1:7]
lex1, lex, parse, resolve, check = (float(x) for x in sys.argv[7:12])
lines, bytes_, wall = int(lines), int(bytes_), float(wall)
rate = lambda ms: f"{lines / (ms / 1e3):,.0f}"
diag = summary.split(":", 1)[-1].strip()
print(f"| {size} | {lines:,} | {bytes_ / 1e6:.1f} | {rate(lex1)} | {rate(lex)} | {rate(parse)} | "
      f"{rate(resolve)} | {rate(check)} | {wall * 1e3:,.0f} ms | {lines / wall:,.0f} | {peak} | "
      f"{wall * 1e3 / lex1:.1f}x | {wall * 1e3 / lex:.1f}x | {diag} |")
EOF
done

# Growth: time per line should stay flat as the app grows.
sizes=($SIZES)
for ((i = 1; i < ${#sizes[@]}; i++)); do
    a=${sizes[i-1]} b=${sizes[i]}
    python3 -c 'import sys; a,b,la,lb,wa,wb=sys.argv[1:7]; r=int(lb)/int(la); t=float(wb)/float(wa); print(f"- growth {a} -> {b}: {r:.1f}x lines cost {t:.1f}x wall time ({t/r:.2f} per unit of lines)")' \
        "$a" "$b" "${LINES[$a]}" "${LINES[$b]}" "${WALL[$a]}" "${WALL[$b]}" >>"$OUT/results.md"
done

echo "== ruff on CPython's standard library"
STDLIB=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
if command -v ruff >/dev/null 2>&1; then
    ruff check --no-cache --show-files "$STDLIB" 2>/dev/null | grep '\.py$' >"$OUT/ruff-files.txt" || true
    ruff_lines=$(tr '\n' '\0' <"$OUT/ruff-files.txt" | xargs -0 cat | wc -l)
    ruff_bytes=$(tr '\n' '\0' <"$OUT/ruff-files.txt" | xargs -0 cat | wc -c)
    ruff_files=$(wc -l <"$OUT/ruff-files.txt")
    hyperfine -N --warmup 1 --runs "$RUNS" -i --export-json "$OUT/ruff.json" \
        "ruff check --no-cache $STDLIB"
    ruff_wall=$(mean_of "$OUT/ruff.json")
    ruff_peak=$(peak_mib ruff check --no-cache "$STDLIB")
    python3 - "$ruff_lines" "$ruff_bytes" "$ruff_files" "$ruff_wall" "$ruff_peak" \
        "$(ruff --version)" "$STDLIB" >>"$OUT/results.md" <<'EOF'
import sys
lines, bytes_, files, wall, peak, version, path = sys.argv[1:8]
lines, wall = int(lines), float(wall)
print()
print(f"ruff ({version}) `ruff check --no-cache {path}`: {int(files):,} files, {lines:,} lines, "
      f"{int(bytes_) / 1e6:.1f} MB, {wall * 1e3:,.0f} ms wall, {lines / wall:,.0f} lines/s, peak {peak} MiB")
EOF
    for size in $SIZES; do
        python3 -c 'import sys; l,w,rl,rw,s=sys.argv[1:6]; print(f"- {s}: jadpo check {int(l)/float(w):,.0f} lines/s = {(int(l)/float(w))/(int(rl)/float(rw)):.2f}x ruff")' \
            "${LINES[$size]}" "${WALL[$size]}" "$ruff_lines" "$ruff_wall" "$size" >>"$OUT/results.md"
    done
else
    echo "ruff not found (pip install ruff): comparison skipped" | tee -a "$OUT/results.md"
fi

# `jadpo fmt --check`: on the corpus as generated (every file changes, so
# each result is verified by a second parse) and on a formatted copy (the CI
# case), on the machine's cores.
for size in $SIZES; do
    copy="$CORPORA/$size-formatted"
    rm -rf "$copy" && cp -r "$CORPORA/$size" "$copy"
    "$JADPO" fmt "$copy" >/dev/null || true
    hyperfine -N --warmup 1 --runs "$RUNS" -i --export-json "$OUT/fmt-raw-$size.json" \
        "$JADPO fmt --check $CORPORA/$size"
    hyperfine -N --warmup 1 --runs "$RUNS" -i --export-json "$OUT/fmt-$size.json" \
        "$JADPO fmt --check $copy"
    echo "- $size: \`jadpo fmt --check\` $(python3 -c 'import sys; print(f"{float(sys.argv[1])*1e3:,.0f}")' "$(mean_of "$OUT/fmt-$size.json")") ms formatted, $(python3 -c 'import sys; print(f"{float(sys.argv[1])*1e3:,.0f}")' "$(mean_of "$OUT/fmt-raw-$size.json")") ms as generated" >>"$OUT/results.md"
done

# The language server: from didChange to the publishDiagnostics of that edit.
LSP_SIZES=${LSP_SIZES:-"10k 100k"}
LSP_EDITS=${LSP_EDITS:-200}
{
    echo
    echo "jadpo lsp, didChange to publishDiagnostics and hover right after an edit ($LSP_EDITS edits each, \`target/release/lsp_latency\`):"
} >>"$OUT/results.md"
for size in $LSP_SIZES; do
    dir="$CORPORA/$size"
    [ -d "$dir" ] || "$GEN" --lines "$size" --seed "$SEED" --out "$dir"
    echo "== jadpo lsp latency ($size)"
    line=$(target/release/lsp_latency --app "$dir" --edits "$LSP_EDITS" --jadpo "$JADPO" | tee "$OUT/lsp-$size.txt" | grep -E 'didChange|hover' | paste -sd ';' -)
    echo "- $size: $line" >>"$OUT/results.md"
done

echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/results.md"
echo
echo "== results ($OUT/results.md)"
cat "$OUT/results.md"
