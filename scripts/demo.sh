#!/usr/bin/env bash
# `npm run demo`: a local MediaWiki 1.39 (Debian's package, SQLite, php -S) with the gateway in
# front of it, human-readable logs, both stopped on Ctrl-C. Installs what it needs (setup.sh
# installs the Debian packages when missing).
#   DEMO_PORT (default 8080), DEMO_ADMIN_PORT (8081), DEMO_WIKI_DATA (default .wiki/demo)
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${DEMO_PORT:-8080}
ADMIN_PORT=${DEMO_ADMIN_PORT:-8081}
DATA=${DEMO_WIKI_DATA:-$PWD/.wiki/demo}

[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
npm run build --silent
mkdir -p "$DATA"
eval "$(bash scripts/wiki/setup.sh --data "$DATA" --debug --badges Q17437796,Q17437798)"

gateway_pid=
cleanup() {
  trap - INT TERM EXIT
  [ -n "$gateway_pid" ] && kill -TERM "$gateway_pid" 2>/dev/null && wait "$gateway_pid" 2>/dev/null || true
  bash scripts/wiki/stop.sh "$DATA" >/dev/null 2>&1 || true
  echo "demo stopped"
}
trap cleanup INT TERM EXIT

WIKIEDGE_UPSTREAM="$WIKI_URL" WIKIEDGE_HOST=127.0.0.1 WIKIEDGE_PORT="$PORT" WIKIEDGE_ADMIN_PORT="$ADMIN_PORT" \
  MALLOC_MMAP_THRESHOLD_=131072 WIKIEDGE_LOG_FORMAT=pretty node dist/main.js &
gateway_pid=$!
for _ in $(seq 1 50); do curl -fs -o /dev/null "http://127.0.0.1:$ADMIN_PORT/healthz" && break; sleep 0.1; done

cat <<MSG

  wiki (direct):   $WIKI_URL/w/api.php
  gateway:         http://127.0.0.1:$PORT/w/api.php
  admin:           http://127.0.0.1:$ADMIN_PORT/healthz  /readyz  /metrics

  Try (run it twice: the second answer is X-Cache: hit, and the wiki's debuginfo never reaches you):
    curl -si 'http://127.0.0.1:$PORT/w/api.php?action=wbavailablebadges&format=json'

  Ctrl-C stops both.
MSG
wait "$gateway_pid"
