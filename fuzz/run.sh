#!/usr/bin/env bash
# Runs every jadpo fuzz target for N seconds each (default 300):
#   fuzz/run.sh [SECONDS] [TARGET...]
# Seeds each corpus from tests/fixtures, examples, packages and stdlib on
# every run (copies are cheap and idempotent). Crashes are saved under
# fuzz/artifacts/<target>/; the script runs every target, then exits 1 if any
# of them found a crash. Uses RUSTC_BOOTSTRAP=1 so the stable toolchain
# accepts cargo-fuzz's nightly flags. JADPO_FUZZ_SANITIZER=none turns the
# address sanitizer off (faster, or where it does not work). Leak detection
# is off: interned names and each parse's chumsky parser graph (an Rc
# cycle) are never freed, by design and by a known leak respectively.
set -uo pipefail

secs="${1:-300}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(parse manifest check lsp fmt)
fi
sanitizer="${JADPO_FUZZ_SANITIZER:-address}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 2
export RUSTC_BOOTSTRAP=1
# No leak report at exit either (libFuzzer's -detect_leaks=0 covers only inputs).
export ASAN_OPTIONS="detect_leaks=0:detect_odr_violation=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

# seed TARGET PREFIX-BYTES FILES...: copies each file into the target's
# corpus, after the given prefix (printf escapes), under a stable name.
seed() {
    local target="$1" prefix="$2"
    shift 2
    local dir="fuzz/corpus/$target"
    mkdir -p "$dir"
    local f
    for f in "$@"; do
        local name
        name="seed-$(printf '%s' "$prefix$f" | cksum | cut -d' ' -f1)"
        { printf "$prefix"; cat "$f"; } > "$dir/$name"
    done
}

mapfile -t sources < <(find tests/fixtures examples packages stdlib/lib -name '*.jadpo' | sort)
mapfile -t packages < <(find tests/fixtures packages stdlib/lib -name 'package.yaml' | sort)
mapfile -t apps < <(find tests/fixtures examples -name 'jadpo.yaml' | sort)

seed parse '' "${sources[@]}"
# manifest: first byte 0 = package.yaml found by path, 1 = jadpo.yaml.
seed manifest '\000' "${packages[@]}"
seed manifest '\001' "${apps[@]}"
# check: the `Splice` variant (first u32 >= 2^31), billing file 0..4, at 0,
# cut 0, then a fixture's text inserted at the top of that file.
i=0
for f in "${sources[@]}"; do
    seed check "\\377\\377\\377\\377\\00$((i % 5))\\000\\000\\000" "$f"
    i=$((i + 1))
done

# lsp: each source opened in an editor session (initialize, didOpen, a
# hover and a definition at its start, didChange, shutdown), framed; the
# document sits in examples/billing, so each session checks a real app.
mkdir -p fuzz/corpus/lsp
python3 - "$root" "${sources[@]}" <<'PY'
import hashlib, json, sys
def frame(msg):
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
root = sys.argv[1]
for path in sys.argv[2:]:
    text = open(path, encoding="utf-8", errors="replace").read()[:20000]
    uri = "file://" + root + "/examples/billing/src/fuzz_seed.jadpo"
    at = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
    session = b"".join(frame(m) for m in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "jadpo", "version": 1, "text": text}}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": at},
        {"jsonrpc": "2.0", "id": 3, "method": "textDocument/definition", "params": at},
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "text": "x"}]}},
        {"jsonrpc": "2.0", "id": 4, "method": "shutdown"},
    ])
    name = "seed-" + hashlib.sha256(path.encode()).hexdigest()[:16]
    open("fuzz/corpus/lsp/" + name, "wb").write(session)
PY

# Build every target once, then run the binaries directly: other people
# editing the sources between targets must not trigger rebuilds mid-run.
if ! cargo fuzz build --sanitizer "$sanitizer" -O -a; then
    echo "the fuzz targets do not build"
    exit 2
fi
triple="$(rustc -vV | sed -n 's/^host: //p')"
bin="fuzz/target/$triple/release"

failed=()
for t in "${targets[@]}"; do
    echo "== fuzzing $t for ${secs}s (sanitizer: $sanitizer)"
    # A target whose input is structured (fmt's) has no seeds: start empty.
    mkdir -p "fuzz/artifacts/$t" "fuzz/corpus/$t"
    if ! "$bin/$t" "fuzz/corpus/$t" -artifact_prefix="fuzz/artifacts/$t/" \
        -max_total_time="$secs" -timeout=20 -detect_leaks=0 -rss_limit_mb=4096 -max_len=65536 \
        -print_final_stats=1; then
        failed+=("$t")
    fi
done

if [ ${#failed[@]} -ne 0 ]; then
    echo "crashes found by: ${failed[*]} (inputs in fuzz/artifacts/)"
    echo "reproduce one with: $bin/<target> fuzz/artifacts/<target>/<file>"
    exit 1
fi
echo "no crash in ${targets[*]}"
