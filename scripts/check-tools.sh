#!/usr/bin/env bash
# Installs the independent checkers the operator tests use, when missing:
#   promtool (Debian's `prometheus` package, without its recommends), which
#     loads and unit-tests the rules of `jadpo alerts prometheus`;
#   Python's prometheus_client, whose parser reads a /metrics scrape.
# Exits 2, naming the tool, when one cannot be installed. `.ci/run` runs it
# and then sets JADPO_REQUIRE_TOOLS=1, so a missing tool fails a test
# instead of skipping it.
set -euo pipefail

apt_install() {
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
    else
        sudo apt-get update -qq >&2
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
    fi
}

if ! command -v promtool >/dev/null 2>&1; then
    echo "check-tools: installing promtool from Debian's packages" >&2
    apt_install prometheus
    command -v promtool >/dev/null 2>&1 || { echo "check-tools: no promtool after installing it" >&2; exit 2; }
fi

if ! python3 -c 'import prometheus_client.openmetrics.parser' >/dev/null 2>&1; then
    echo "check-tools: installing prometheus_client for python3" >&2
    python3 -m pip install --quiet prometheus_client >&2 \
        || python3 -m pip install --quiet --break-system-packages prometheus_client >&2 \
        || apt_install python3-prometheus-client
    python3 -c 'import prometheus_client.openmetrics.parser' >/dev/null 2>&1 \
        || { echo "check-tools: python3 cannot import prometheus_client after installing it" >&2; exit 2; }
fi
echo "check-tools: promtool and prometheus_client are there" >&2
