#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server:
#   scripts/with-postgres.sh CMD [ARGS...]
# Installs the server from Debian's packages when it is missing
# (apt-get install -y postgresql), runs initdb in a temporary folder as an
# unprivileged user, serves on a Unix socket only (listen_addresses=''),
# exports JADPO_TEST_PG (a URL the tests connect with), runs CMD, and stops
# the server and removes the folder however CMD ends. CMD's exit status is
# the script's.
#   JADPO_PG_FAST=1   fsync off (tests: nothing here needs to survive)
set -euo pipefail

pg_bin() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

if ! bin="$(pg_bin)"; then
    echo "with-postgres: installing PostgreSQL from Debian's packages" >&2
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    else
        sudo apt-get update -qq >&2
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    fi
    bin="$(pg_bin)" || { echo "with-postgres: no PostgreSQL after installing it" >&2; exit 2; }
fi

dir="$(mktemp -d /tmp/jadpo-pg.XXXXXX)"
# initdb and postgres refuse to run as root: run them as the packages'
# `postgres` user (or `nobody`), who owns the folder.
as=()
if [ "$(id -u)" -eq 0 ]; then
    user=postgres
    id "$user" >/dev/null 2>&1 || user=nobody
    chown "$user" "$dir"
    chmod 700 "$dir"
    as=(runuser -u "$user" --)
fi

stop() {
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap stop EXIT

"${as[@]}" "$bin/initdb" -D "$dir/data" -A trust -U jadpo --no-sync -E UTF8 >/dev/null
fsync=on
if [ "${JADPO_PG_FAST:-0}" = 1 ]; then
    fsync=off
fi
# wal_init_zero=off: a fresh server creates every WAL segment it fills
# (16 MB), and zero-filling one stalled every commit for 30-40 ms, about
# every 3 s under load; a server that has run a while recycles its
# segments instead.
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -o \
    "-c listen_addresses='' -c unix_socket_directories=$dir -c fsync=$fsync -c max_connections=200 -c wal_init_zero=off" \
    start >/dev/null

export JADPO_TEST_PG="postgresql:///postgres?host=$dir&user=jadpo"
# The server's own client tools (psql) first, for tests that administer
# the test server.
export PATH="$bin:$PATH"
status=0
"$@" || status=$?
exit "$status"
