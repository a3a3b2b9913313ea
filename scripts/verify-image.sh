#!/usr/bin/env bash
# Build the wikiedge container image from ./Dockerfile and run it with podman, on a machine with
# no Docker engine and no reachable container registry.
#
# Usage (as root: debootstrap, and podman with a store of its own):
#   bash scripts/verify-image.sh
#   WIKIEDGE_VERIFY_REBUILD_BASE=1 bash scripts/verify-image.sh   # rebuild the cached base image
#   WIKIEDGE_VERIFY_NO_CACHE=1 bash scripts/verify-image.sh       # podman build --no-cache
# Other knobs: WIKIEDGE_VERIFY_STATE (podman store, networks and base image cache, default
# /var/tmp/wikiedge-verify; delete it to reclaim the space), WIKIEDGE_VERIFY_IMAGE (tag,
# default localhost/wikiedge:verify), WIKIEDGE_VERIFY_STORAGE_DRIVER (overlay|vfs),
# WIKIEDGE_VERIFY_DEBIAN_MIRROR, WIKIEDGE_VERIFY_START_TIMEOUT (s, 30),
# WIKIEDGE_VERIFY_STOP_TIMEOUT (s, 20: podman stop's grace before SIGKILL).
#
# What it does
#   1. Installs podman, runc, netavark, aardvark-dns, iptables, debootstrap and uidmap when missing
#      (scripts/install-system-deps.sh) and points podman at a store of its own
#      (scripts/lib/podman.sh: containers.conf + storage.conf under WIKIEDGE_VERIFY_STATE, with
#      lowered default rlimits, without which `podman run` fails in this sandbox).
#   2. Base image. A registry is unreachable, so node:<major>-bookworm-slim is built locally
#      once, for the major version of this machine's node (20 here): `debootstrap
#      --variant=minbase bookworm` + this machine's own node binary and npm + the official
#      image's `node` user (uid/gid 1000), docker-entrypoint.sh, ENTRYPOINT and CMD, imported
#      under the official name. Cached; rebuilt only when missing or when the machine's node
#      version changed.
#   3. Builds the project image with `podman build --isolation chroot --format docker
#      --build-arg NODE_VERSION=<major>` (the Dockerfile's one Node version argument; its
#      default, the current LTS line, is not what is built here). `npm ci` in the build reaches
#      the real npm registry; scripts/lib/podman.sh says how the host's CA is lent to it.
#   4. Checks the image config: non-root numeric USER, EXPOSE 8080 8081,
#      WIKIEDGE_ADMIN_HOST=0.0.0.0, a HEALTHCHECK that uses node (no curl), STOPSIGNAL
#      SIGTERM, CMD node dist/main.js.
#   5. `podman image mount`s the image and checks its filesystem: dist/main.js present, no src/,
#      production dependencies present, none of package.json's devDependencies in
#      node_modules, no curl/wget.
#   6. Starts a throw-away MediaWiki 1.39 on loopback (scripts/wiki/setup.sh) and runs the
#      image with `podman run -d --read-only --network host`, with WIKIEDGE_UPSTREAM set to
#      that wiki and free ports. Host networking because the wiki listens on 127.0.0.1 only:
#      the container shares the host's loopback, and no other interface sees the wiki. For the
#      same reason both listeners are told to bind 127.0.0.1 (WIKIEDGE_HOST,
#      WIKIEDGE_ADMIN_HOST), overriding the image's WIKIEDGE_ADMIN_HOST=0.0.0.0, which would
#      otherwise expose the admin port on the host's interfaces while the check runs. Bridge
#      networks, published ports, service names and the image's 0.0.0.0 admin binding are
#      exercised by scripts/verify-compose.sh (Prometheus scrapes the admin port over its own
#      network there).
#   7. Checks, against the running container: /healthz 200 {"status":"ok"} from the host;
#      `podman healthcheck run` (the image's HEALTHCHECK command, run by podman inside the
#      container) exits 0 and the container's health status is "healthy"; the container's
#      main process (podman inspect .State.Pid, read in the host's /proc) has a non-zero uid,
#      and it is node itself, PID 1 in the container (so it gets the stop signal);
#      `/w/api.php?action=query&meta=siteinfo&format=json` through the gateway has the status
#      of the direct request and a "MediaWiki 1.39" generator, and is a `miss` then a `hit`;
#      `podman stop` (which sends the image's STOPSIGNAL, checked to be SIGTERM) ends it within
#      WIKIEDGE_VERIFY_STOP_TIMEOUT without SIGKILL, with exit code 0, and its log (podman
#      logs) has "shutdown complete". /readyz and /metrics are reported for information only.
#   8. Cleans up what it started (the container, the wiki via scripts/wiki/stop.sh --purge,
#      the image mount, temp files) and prints a PASS/FAIL summary. Exit status 0 only if
#      every check passed.
#   Until this version the gateway was started from the mounted image filesystem with chroot,
#   because `podman run` failed on rlimits; with the lowered default_ulimits podman run works,
#   and it checks more (a real container: namespaces, PID 1, podman's healthcheck and stop).
#
# What this proves
#   * The Dockerfile builds with a standard builder (buildah, the engine behind podman build)
#     with NODE_VERSION=<this machine's major>, both stages, `npm ci` against the registry.
#   * The image holds what the gateway needs and no dev dependencies or sources, and runs under
#     a container runtime (runc, via podman) as a non-root PID 1 with a read-only root
#     filesystem; its HEALTHCHECK command works; it proxies a real MediaWiki 1.39 api.php
#     request and caches it; `podman stop` with its STOPSIGNAL makes it exit 0 after a clean
#     shutdown.
#
# What this does NOT prove
#   * Docker itself: a Docker engine (dockerd/containerd, its default seccomp profile and
#     rlimits, docker-proxy) never runs the image here; podman + runc do, with lowered rlimits.
#   * The HEALTHCHECK scheduler: podman schedules health checks with systemd timers, and this
#     machine has no systemd; the check command is run once, on demand.
#   * The default base: node:26-bookworm-slim (the Dockerfile's default NODE_VERSION) is never
#     built; the base here is a stand-in (Debian bookworm minbase + this machine's Node 20
#     binary), which differs from the real node:20-bookworm-slim in Node patch version, ships
#     no yarn or corepack, and is not built the same way. No digest is pinned.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IMAGE=${WIKIEDGE_VERIFY_IMAGE:-localhost/wikiedge:verify}
START_TIMEOUT=${WIKIEDGE_VERIFY_START_TIMEOUT:-30}
STOP_TIMEOUT=${WIKIEDGE_VERIFY_STOP_TIMEOUT:-20}
SITEINFO='/w/api.php?action=query&meta=siteinfo&format=json'
CTR=wikiedge-verify-$$

T0=$(date +%s)
RESULTS=()
FAILED=0
WORK=""
MNT=""
CTR_MADE=0
WIKI_DATA=""
STEP="preflight"
BASE_IMAGE="node:<major>-bookworm-slim"

log() { echo "[verify-image] $*" >&2; }
pass() {
  RESULTS+=("PASS  $1")
  log "PASS: $1"
}
fail() {
  RESULTS+=("FAIL  $1")
  FAILED=$((FAILED + 1))
  log "FAIL: $1"
}
info() {
  RESULTS+=("info  $1")
  log "info: $1"
}
# A failure after which nothing else can be checked: record it and leave (cleanup runs).
abort() {
  fail "$1"
  exit 1
}
# shellcheck source=scripts/lib/podman.sh
. "$ROOT/scripts/lib/podman.sh"

# ------------------------------------------------------------------ cleanup + summary
# shellcheck disable=SC2317 # invoked by the EXIT trap
on_exit() {
  local rc=$?
  set +e
  if [ "$CTR_MADE" = 1 ]; then
    log "removing container $CTR"
    pm rm -f -t 0 "$CTR" > /dev/null 2>&1 || log "podman rm -f $CTR failed"
  fi
  if [ -n "$WIKI_DATA" ]; then
    log "stopping the wiki ($WIKI_DATA)"
    bash "$ROOT/scripts/wiki/stop.sh" "$WIKI_DATA" --purge > /dev/null 2>&1 ||
      log "scripts/wiki/stop.sh $WIKI_DATA --purge failed"
  fi
  if [ -n "$MNT" ]; then
    pm image unmount "$IMAGE" > /dev/null 2>&1 || log "podman image unmount $IMAGE failed"
  fi
  [ -n "$WORK" ] && rm -rf "$WORK"
  if [ "$rc" -ne 0 ] && [ "$FAILED" -eq 0 ]; then
    RESULTS+=("FAIL  stopped unexpectedly while $STEP (exit status $rc, see the log above)")
    FAILED=1
  fi
  echo
  echo "================ wikiedge image verification ================"
  echo "image: $IMAGE   base: $BASE_IMAGE (local stand-in)   took: $(since "$T0")"
  local r
  for r in "${RESULTS[@]}"; do echo "  $r"; done
  if [ "$FAILED" -eq 0 ]; then
    echo "RESULT: PASS"
    exit 0
  fi
  echo "RESULT: FAIL ($FAILED failed)"
  exit 1
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# --------------------------------------------------------------------------- preflight
[ -f "$ROOT/Dockerfile" ] || abort "no Dockerfile in $ROOT"
[ -f "$ROOT/src/main.ts" ] || abort "no src/main.ts: the gateway source is not there yet"
[ -f "$ROOT/scripts/wiki/setup.sh" ] || abort "no scripts/wiki/setup.sh"
WORK=$(mktemp -d /tmp/wikiedge-verify.XXXXXX)

STEP="setting up podman"
podman_setup

STEP="building the stand-in base image"
ensure_base_image

# ------------------------------------------------------------------------ project image
STEP="building the project image"
if build_project_image "$IMAGE"; then
  pass "image builds with --build-arg NODE_VERSION=$NODE_MAJOR (both stages, npm ci in the build) in $BUILD_SECONDS"
else
  abort "image build failed (log above)"
fi

# ------------------------------------------------------------------------ image config
STEP="checking the image config"
pm image inspect "$IMAGE" > "$WORK/inspect.json" || abort "podman image inspect $IMAGE"
# Prints KEY=VALUE lines: USER, WORKDIR, STOPSIGNAL, PORTS, HEALTHCHECK, ENTRYPOINT, CMD,
# ENV (one ENV line per variable), SIZE. Arrays are JSON.
node -e '
const i = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))[0];
const c = i.Config || {};
const out = (k, v) => console.log(k + "=" + (typeof v === "string" ? v : JSON.stringify(v ?? null)));
out("USER", c.User || "");
out("WORKDIR", c.WorkingDir || "/");
out("STOPSIGNAL", c.StopSignal || "");
out("PORTS", Object.keys(c.ExposedPorts || {}).sort());
out("HEALTHCHECK", (i.Healthcheck || c.Healthcheck || {}).Test || null);
out("ENTRYPOINT", c.Entrypoint || []);
out("CMD", c.Cmd || []);
out("SIZE", String(i.Size || 0));
for (const e of c.Env || []) out("ENV", e);
' "$WORK/inspect.json" > "$WORK/config.txt" || abort "reading the image config"
cfg() { sed -n "s/^$1=//p" "$WORK/config.txt" | head -1; }
IMG_USER=$(cfg USER)
IMG_WORKDIR=$(cfg WORKDIR)
IMG_HEALTH=$(cfg HEALTHCHECK)
info "image size $(($(cfg SIZE) / 1000000)) MB, USER=$IMG_USER, WORKDIR=$IMG_WORKDIR, ENTRYPOINT=$(cfg ENTRYPOINT), CMD=$(cfg CMD)"

[ "$(cfg PORTS)" = '["8080/tcp","8081/tcp"]' ] && pass "EXPOSE 8080 8081" ||
  fail "EXPOSE is $(cfg PORTS), want 8080/tcp 8081/tcp"
grep -qx 'ENV=WIKIEDGE_ADMIN_HOST=0.0.0.0' "$WORK/config.txt" && pass "ENV WIKIEDGE_ADMIN_HOST=0.0.0.0" ||
  fail "ENV WIKIEDGE_ADMIN_HOST=0.0.0.0 missing"
grep -qx 'ENV=WIKIEDGE_ADMIN_TOKEN_FILE=/run/secrets/wikiedge_admin_token' "$WORK/config.txt" &&
  pass "ENV WIKIEDGE_ADMIN_TOKEN_FILE=/run/secrets/wikiedge_admin_token (the admin token from a secret by default)" ||
  fail "ENV WIKIEDGE_ADMIN_TOKEN_FILE=/run/secrets/wikiedge_admin_token missing"
[ "$(cfg STOPSIGNAL)" = SIGTERM ] && pass "STOPSIGNAL SIGTERM" || fail "STOPSIGNAL is '$(cfg STOPSIGNAL)'"
[ "$(cfg CMD)" = '["node","dist/main.js"]' ] && pass 'CMD ["node","dist/main.js"]' || fail "CMD is $(cfg CMD)"
case "$IMG_HEALTH" in
  null | '') fail "no HEALTHCHECK in the image config" ;;
  *curl* | *wget*) fail "HEALTHCHECK uses curl/wget: $IMG_HEALTH" ;;
  '["CMD","node",'*) pass "HEALTHCHECK runs node (exec form)" ;;
  *) fail "HEALTHCHECK is not an exec-form node command: $IMG_HEALTH" ;;
esac

# ---------------------------------------------------------------- image filesystem
STEP="checking the image filesystem"
MNT=$(pm image mount "$IMAGE") || abort "podman image mount $IMAGE"
[ -d "$MNT/usr" ] || abort "podman image mount gave $MNT, which holds no root filesystem"
log "image mounted at $MNT"
APP="$MNT${IMG_WORKDIR%/}"

# USER may be "uid[:gid]" or "name[:group]"; resolve names in the image's own files.
IMG_UID=${IMG_USER%%:*}
IMG_GID=""
[[ "$IMG_USER" == *:* ]] && IMG_GID=${IMG_USER#*:}
if [ -z "$IMG_UID" ]; then
  IMG_UID=0
elif ! [[ "$IMG_UID" =~ ^[0-9]+$ ]]; then
  name=$IMG_UID
  IMG_UID=$(awk -F: -v n="$name" '$1 == n {print $3}' "$MNT/etc/passwd")
  [ -z "$IMG_GID" ] && IMG_GID=$(awk -F: -v n="$name" '$1 == n {print $4}' "$MNT/etc/passwd")
  [ -n "$IMG_UID" ] || abort "USER $name is not in the image's /etc/passwd"
fi
if [ -z "$IMG_GID" ]; then
  IMG_GID=$(awk -F: -v u="$IMG_UID" '$3 == u {print $4; exit}' "$MNT/etc/passwd")
  IMG_GID=${IMG_GID:-$IMG_UID}
elif ! [[ "$IMG_GID" =~ ^[0-9]+$ ]]; then
  IMG_GID=$(awk -F: -v n="$IMG_GID" '$1 == n {print $3}' "$MNT/etc/group")
fi
if [ "$IMG_UID" != 0 ] && [[ "$IMG_USER" =~ ^[0-9]+(:[0-9]+)?$ ]]; then
  pass "USER $IMG_USER is numeric and not root"
elif [ "$IMG_UID" != 0 ]; then
  pass "USER $IMG_USER is not root (uid $IMG_UID; a numeric USER would suit runAsNonRoot better)"
else
  fail "image runs as root (USER '$IMG_USER')"
fi

[ -f "$APP/dist/main.js" ] && pass "dist/main.js in the image" || fail "no ${IMG_WORKDIR%/}/dist/main.js in the image"
[ -e "$APP/src" ] && fail "sources (src/) are in the runtime image" || pass "no src/ in the runtime image"
# Every devDependency of package.json must be absent; every dependency present.
node -e '
const fs = require("fs"), path = require("path");
const pkg = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const nm = process.argv[2];
const has = (n) => fs.existsSync(path.join(nm, n, "package.json"));
const dev = Object.keys(pkg.devDependencies || {}).filter(has);
const missing = Object.keys(pkg.dependencies || {}).filter((n) => !has(n));
if (dev.length) console.log("FAIL dev dependencies in the image: " + dev.join(", "));
else console.log("PASS no devDependencies in node_modules (" + Object.keys(pkg.devDependencies || {}).join(", ") + ")");
if (missing.length) console.log("FAIL production dependencies missing: " + missing.join(", "));
else console.log("PASS all production dependencies present");
' "$ROOT/package.json" "$APP/node_modules" > "$WORK/deps.txt" || fail "checking node_modules"
while read -r verdict msg; do
  if [ "$verdict" = PASS ]; then pass "$msg"; else fail "$msg"; fi
done < "$WORK/deps.txt"
tools=""
for b in curl wget; do
  for d in usr/bin bin usr/local/bin; do [ -e "$MNT/$d/$b" ] && tools="$tools $d/$b"; done
done
[ -z "$tools" ] && pass "no curl/wget in the image" || fail "found in the image:$tools"

# ------------------------------------------------------------------------- the wiki
# ------------------------------------------------------------------------- the wiki
STEP="starting the wiki"
free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}
t=$(date +%s)
log "starting a throw-away wiki with scripts/wiki/setup.sh"
# Our own data dir, so that cleanup knows it even if setup.sh fails half-way.
WIKI_DATA="$WORK/wiki"
if ! bash "$ROOT/scripts/wiki/setup.sh" --data "$WIKI_DATA" > "$WORK/wiki.out" 2> "$WORK/wiki.err"; then
  tail -20 "$WORK/wiki.err" >&2
  abort "scripts/wiki/setup.sh failed (log above)"
fi
WIKI_URL=$(sed -n 's/^WIKI_URL=//p' "$WORK/wiki.out" | tail -1)
WIKI_DATA=$(sed -n 's/^WIKI_DATA=//p' "$WORK/wiki.out" | tail -1)
[ -n "$WIKI_URL" ] && [ -n "$WIKI_DATA" ] || abort "setup.sh printed no WIKI_URL=/WIKI_DATA= lines"
info "wiki $WIKI_URL up in $(since "$t")"

# ------------------------------------------------------------------ podman run the image
STEP="running the image"
PORT=$(free_port)
ADMIN_PORT=$(free_port)
while [ "$ADMIN_PORT" = "$PORT" ]; do ADMIN_PORT=$(free_port); done
log "podman run $IMAGE (host network, ports $PORT/$ADMIN_PORT on 127.0.0.1)"
CTR_MADE=1
# The image reads the admin token from /run/secrets/wikiedge_admin_token by default (Dockerfile).
openssl rand -hex 32 > "$WORK/admin-token"
chmod 644 "$WORK/admin-token"
if ! pm run -d --name "$CTR" --read-only --network host \
  -v "$WORK/admin-token:/run/secrets/wikiedge_admin_token:ro" \
  -e "WIKIEDGE_UPSTREAM=$WIKI_URL" \
  -e WIKIEDGE_HOST=127.0.0.1 -e "WIKIEDGE_PORT=$PORT" \
  -e WIKIEDGE_ADMIN_HOST=127.0.0.1 -e "WIKIEDGE_ADMIN_PORT=$ADMIN_PORT" \
  -e "WIKIEDGE_LOG_LEVEL=${WIKIEDGE_LOG_LEVEL:-info}" \
  "$IMAGE" > "$WORK/run.out" 2> "$WORK/run.err"; then
  cat "$WORK/run.err" >&2
  abort "podman run failed (above)"
fi
# Podman wants systemd for its health check timers; without systemd it says so on stderr and
# runs the container all the same. Anything else on stderr is shown.
grep -v 'systemd' "$WORK/run.err" >&2 || true
pass "podman run --read-only: container $CTR started"

state() { pm inspect --format "$1" "$CTR" 2> /dev/null; }
up=0
code=""
for _ in $(seq $((START_TIMEOUT * 5))); do
  [ "$(state '{{.State.Running}}')" = true ] || break
  code=$(curl -s -o "$WORK/healthz.body" -w '%{http_code}' --max-time 2 "http://127.0.0.1:$ADMIN_PORT/healthz" || true)
  if [ "$code" = 200 ]; then
    up=1
    break
  fi
  sleep 0.2
done
if [ "$up" != 1 ]; then
  pm logs "$CTR" 2>&1 | tail -30 >&2
  [ "$(state '{{.State.Running}}')" = true ] &&
    abort "gateway: /healthz not 200 within ${START_TIMEOUT}s (last: ${code:-none})"
  abort "container exited with code $(state '{{.State.ExitCode}}') before /healthz answered (log above)"
fi
if node -e 'const b = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); process.exit(b.status === "ok" ? 0 : 1)' "$WORK/healthz.body" 2> /dev/null; then
  pass "GET /healthz on the admin port: 200 {\"status\":\"ok\"}"
else
  fail "GET /healthz: 200 but body is $(head -c 200 "$WORK/healthz.body")"
fi

# The image's HEALTHCHECK, run by podman in the container, as the engine's scheduler would.
if pm healthcheck run "$CTR" > "$WORK/hc.log" 2>&1; then
  pass "podman healthcheck run (the image's HEALTHCHECK command) exits 0"
else
  fail "podman healthcheck run failed: $(head -c 300 "$WORK/hc.log")"
fi
health=$(state '{{.State.Health.Status}}')
[ "$health" = healthy ] && pass "container health status: healthy" || fail "container health status: '$health'"

# Who runs: the container's main process, seen from the host.
HOST_PID=$(state '{{.State.Pid}}')
run_uid=$(awk '/^Uid:/ {print $2}' "/proc/$HOST_PID/status" 2> /dev/null || echo "?")
run_comm=$(cat "/proc/$HOST_PID/comm" 2> /dev/null || echo "?")
ns_pid=$(awk '/^NSpid:/ {print $NF}' "/proc/$HOST_PID/status" 2> /dev/null || echo "?")
if [ "$run_uid" != "?" ] && [ "$run_uid" != 0 ] && [ "$run_uid" = "$IMG_UID" ]; then
  pass "the container's main process runs as uid $run_uid, the image's USER (host pid $HOST_PID)"
else
  fail "the container's main process runs as uid $run_uid (image USER uid $IMG_UID)"
fi
if [ "$run_comm" = node ] && [ "$ns_pid" = 1 ]; then
  pass "node is PID 1 in the container (the entrypoint exec'd it; it receives the stop signal)"
else
  fail "the container's main process is '$run_comm', PID $ns_pid in the container (want node, PID 1)"
fi

# One real api.php answer, direct and through the gateway; then the same again, from the cache.
d_code=$(curl -sS -o "$WORK/direct.json" -w '%{http_code}' --max-time 30 "$WIKI_URL$SITEINFO" || echo 000)
g_code=$(curl -sS -D "$WORK/gateway.h1" -o "$WORK/gateway.json" -w '%{http_code}' --max-time 30 "http://127.0.0.1:$PORT$SITEINFO" || echo 000)
gen() {
  node -e 'try { const g = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).query.general.generator; console.log(g); } catch { console.log(""); }' "$1"
}
d_gen=$(gen "$WORK/direct.json")
g_gen=$(gen "$WORK/gateway.json")
if [ "$g_code" = "$d_code" ] && [ "$g_code" != 000 ]; then
  pass "siteinfo through the gateway: HTTP $g_code, same as direct"
else
  fail "siteinfo status: gateway $g_code, direct $d_code"
fi
if [[ "$g_gen" == "MediaWiki 1.39"* ]] && [ "$g_gen" = "$d_gen" ]; then
  pass "siteinfo through the gateway: generator \"$g_gen\""
else
  fail "siteinfo generator: gateway \"$g_gen\", direct \"$d_gen\" (body: $(head -c 200 "$WORK/gateway.json"))"
fi
curl -sS -D "$WORK/gateway.h2" -o /dev/null --max-time 30 "http://127.0.0.1:$PORT$SITEINFO" || true
xc1=$(sed -n 's/^[Xx]-[Cc]ache: *\([a-z-]*\).*/\1/p' "$WORK/gateway.h1")
xc2=$(sed -n 's/^[Xx]-[Cc]ache: *\([a-z-]*\).*/\1/p' "$WORK/gateway.h2")
if [ "$xc1" = miss ] && [ "$xc2" = hit ]; then
  pass "the same siteinfo request twice: X-Cache miss, then hit"
else
  fail "the same siteinfo request twice: X-Cache '$xc1', then '$xc2' (want miss, hit)"
fi

for p in readyz metrics; do
  c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$ADMIN_PORT/$p" || true)
  info "GET /$p on the admin port: HTTP $c"
done
# Read whole, then searched: `curl | grep -q` under pipefail fails when grep stops at its match
# while curl still writes (SIGPIPE), which it did once in three runs.
metrics=$(curl -s --max-time 5 "http://127.0.0.1:$ADMIN_PORT/metrics" || true)
if grep -q "^wikiedge_build_info{.*commit=\"$SOURCE_COMMIT\"" <<< "$metrics"; then
  pass "wikiedge_build_info names the commit the image was built from ($SOURCE_COMMIT)"
else
  fail "wikiedge_build_info does not name commit $SOURCE_COMMIT (--build-arg SOURCE_COMMIT)"
fi

# ------------------------------------------------------------------------- podman stop
STEP="stopping the container"
sig=$(state '{{.Config.StopSignal}}')
# podman shows the stop signal as a number; 15 is SIGTERM.
[ "$sig" = 15 ] || [ "$sig" = SIGTERM ] && pass "the container's stop signal is SIGTERM (from the image)" ||
  fail "the container's stop signal is '$sig'"
t=$(date +%s%N)
pm stop -t "$STOP_TIMEOUT" "$CTR" > /dev/null 2> "$WORK/stop.err" || fail "podman stop failed: $(head -c 300 "$WORK/stop.err")"
stop_ms=$((($(date +%s%N) - t) / 1000000))
if grep -q 'SIGKILL' "$WORK/stop.err"; then
  fail "podman stop had to SIGKILL the gateway after ${STOP_TIMEOUT}s"
fi
rc=$(state '{{.State.ExitCode}}')
if [ "$(state '{{.State.Running}}')" = false ] && [ "$rc" = 0 ]; then
  pass "podman stop: the container exited with code 0 in ${stop_ms} ms"
else
  pm logs "$CTR" 2>&1 | tail -20 >&2
  fail "podman stop: the container exited with code $rc (running: $(state '{{.State.Running}}'))"
fi
pm logs "$CTR" > "$WORK/gateway.log" 2>&1 || true
if grep -q '"msg":"shutdown complete"' "$WORK/gateway.log" && grep -q '"signal":"SIGTERM"' "$WORK/gateway.log"; then
  pass "the gateway logged SIGTERM and \"shutdown complete\""
else
  tail -5 "$WORK/gateway.log" >&2
  fail "no SIGTERM / \"shutdown complete\" line in the container's log"
fi
exit 0
