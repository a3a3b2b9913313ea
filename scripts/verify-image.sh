#!/usr/bin/env bash
# Build the wikiedge container image from ./Dockerfile and check it, on a machine with
# no Docker engine and no reachable container registry.
#
# Usage (as root: it uses debootstrap, chroot, mount and unshare):
#   bash scripts/verify-image.sh
#   WIKIEDGE_VERIFY_REBUILD_BASE=1 bash scripts/verify-image.sh   # rebuild the cached base image
#   WIKIEDGE_VERIFY_NO_CACHE=1 bash scripts/verify-image.sh       # podman build --no-cache
# Other knobs: WIKIEDGE_VERIFY_STATE (podman store + base image cache, default
# /var/tmp/wikiedge-verify; delete it to reclaim the space), WIKIEDGE_VERIFY_IMAGE (tag,
# default localhost/wikiedge:verify), WIKIEDGE_VERIFY_STORAGE_DRIVER (overlay|vfs),
# WIKIEDGE_VERIFY_DEBIAN_MIRROR.
#
# What it does
#   1. Installs podman, runc, debootstrap and uidmap with apt-get if any is missing
#      (one `apt-get update` first).
#   2. Base image. A registry is unreachable, so `node:20-bookworm-slim` is built locally
#      once: `debootstrap --variant=minbase bookworm` + this machine's own Node 20 binary
#      and npm + the official image's `node` user (uid/gid 1000), `docker-entrypoint.sh`,
#      ENTRYPOINT and CMD. It is `podman import`ed as docker.io/library/node:20-bookworm-slim
#      so that the Dockerfile's *default* `FROM ${NODE_IMAGE}` resolves locally with
#      `--pull=never`. Cached in a podman store of its own (WIKIEDGE_VERIFY_STATE, default
#      /var/tmp/wikiedge-verify); rebuilt only when missing or when the machine's Node
#      version changed.
#   3. Builds the project image with `podman build --isolation chroot --format docker`
#      (docker format, because the OCI format silently drops HEALTHCHECK), cgroupfs
#      cgroup manager and runc.
#      Network during the build: chroot isolation creates no network namespace, so
#      `RUN npm ci` uses the host's network and DNS and reaches the same npm registry as
#      `npm ci` on this machine (checked). What it lacks is the host's *trust*: on these
#      machines HTTPS to the registry goes through a TLS-intercepting proxy whose CA the
#      host adds via NODE_EXTRA_CA_CERTS, so inside the build npm fails with
#      SELF_SIGNED_CERT_IN_CHAIN (and retries for ~10 minutes). When the host's node/npm
#      trusts an extra CA (NODE_EXTRA_CA_CERTS or `npm config get cafile`), the build gets
#      a read-only bind mount on /usr/local/etc (npm's global config dir, empty in the base
#      image) holding a copy of that CA bundle and an npmrc with `cafile=` pointing at it.
#      Build-time `--volume`s are not committed, and /usr/local/etc already exists, so no
#      trace of it lands in any layer; the Dockerfile stays exactly what a Docker engine
#      builds. Rejected: mounting the host's npm cache + `npm ci --offline` (needs a
#      different Dockerfile or config, and would not show that the image builds from the
#      registry); `--network host` (chroot isolation already uses the host network).
#      A failing `npm ci` is reported as a FAIL of the build step, with a hint.
#   4. Checks the image config: non-root numeric USER, EXPOSE 8080 8081,
#      WIKIEDGE_ADMIN_HOST=0.0.0.0, a HEALTHCHECK that uses node (no curl), STOPSIGNAL
#      SIGTERM, CMD node dist/main.js.
#   5. `podman image mount`s the image and checks its filesystem: dist/main.js present,
#      no src/, production dependencies present, none of package.json's devDependencies
#      (typescript, vitest, biome, ...) in node_modules, no curl/wget.
#   6. Starts a throw-away MediaWiki 1.39 (scripts/wiki/setup.sh) and starts the gateway
#      from the mounted image: a private mount namespace (unshare -m) with /dev and /proc
#      mounted into the image's root, then `chroot --userspec=UID:GID` as the image's user,
#      with the image's Env, WorkingDir, Entrypoint and Cmd, on free ports.
#      (`podman run` cannot be used: it fails in this sandbox on rlimits.)
#   7. Checks: the process runs with a non-zero uid; GET /healthz on the admin port is 200
#      {"status":"ok"}; the image's own HEALTHCHECK command, run inside the image as its
#      user, exits 0; `/w/api.php?action=query&meta=siteinfo&format=json` through the
#      gateway has the same status as the direct request and query.general.generator
#      starts with "MediaWiki 1.39"; SIGTERM makes the gateway exit with status 0.
#      /readyz and /metrics are reported for information only.
#   8. Cleans up what it started (the gateway by pid, the wiki via scripts/wiki/stop.sh
#      --purge, the image mount, temp files) and prints a PASS/FAIL summary. Exit status
#      0 only if every check passed.
#
# What this proves
#   * The Dockerfile builds with a standard builder (buildah, the engine behind podman
#     build) from the `node:20-bookworm-slim` name, both stages, with `npm ci` against the
#     real registry.
#   * The runtime image holds what the gateway needs and no dev dependencies or sources,
#     runs as non-root, and its filesystem + Env + WorkingDir + Entrypoint/Cmd start a
#     gateway that answers /healthz and proxies a real MediaWiki 1.39 api.php request,
#     with a read-only root filesystem (the image mount is read-only), and that shuts down
#     cleanly on SIGTERM.
#   * The HEALTHCHECK command works with the node binary in the image.
#
# What this does NOT prove
#   * That the image runs under a real Docker engine (or podman run / containerd): no
#     container runtime starts it here, so there are no namespaces, no cgroup limits, no
#     seccomp/capability restrictions, and none of the engine's rlimits (podman run fails
#     on them in this sandbox).
#   * Container networking: the gateway shares the host network; published ports, the
#     compose network, DNS names like http://mediawiki and WIKIEDGE_ADMIN_HOST=0.0.0.0
#     being needed for port publishing are not exercised.
#   * The engine's HEALTHCHECK scheduler (interval, timeout, start period, retries,
#     health status) and that the engine delivers STOPSIGNAL to PID 1 (here the signal is
#     sent to the process directly; there is no PID namespace, so node is not PID 1).
#   * The real node:20-bookworm-slim: the base here is a stand-in (Debian bookworm minbase
#     + this machine's Node 20 binary). The real image differs in Node patch version,
#     ships yarn and corepack, and is not built the same way. Its digest is not pinned.
#   * compose.yaml, Prometheus and Grafana provisioning: not started here.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${WIKIEDGE_VERIFY_STATE:-/var/tmp/wikiedge-verify}
IMAGE=${WIKIEDGE_VERIFY_IMAGE:-localhost/wikiedge:verify}
BASE_IMAGE=docker.io/library/node:20-bookworm-slim
DEBIAN_MIRROR=${WIKIEDGE_VERIFY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
REBUILD_BASE=${WIKIEDGE_VERIFY_REBUILD_BASE:-0}
NO_CACHE=${WIKIEDGE_VERIFY_NO_CACHE:-0}
START_TIMEOUT=${WIKIEDGE_VERIFY_START_TIMEOUT:-30}
STOP_TIMEOUT=${WIKIEDGE_VERIFY_STOP_TIMEOUT:-20}
SITEINFO='/w/api.php?action=query&meta=siteinfo&format=json'

T0=$(date +%s)
RESULTS=()
FAILED=0
WORK=""
MNT=""
GW_PID=""
WIKI_DATA=""
STEP="preflight"

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
since() { echo "$(($(date +%s) - $1))s"; }

# ------------------------------------------------------------------ cleanup + summary
# shellcheck disable=SC2317 # invoked by the EXIT trap
on_exit() {
  local rc=$?
  set +e
  if [ -n "$GW_PID" ] && kill -0 "$GW_PID" 2> /dev/null; then
    log "killing gateway pid $GW_PID"
    kill -KILL "$GW_PID" 2> /dev/null
    wait "$GW_PID" 2> /dev/null
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
[ "$(id -u)" -eq 0 ] || abort "must run as root (debootstrap, chroot, mount, unshare)"
command -v node > /dev/null || abort "node not found on PATH"
[ -f "$ROOT/Dockerfile" ] || abort "no Dockerfile in $ROOT"
[ -f "$ROOT/src/main.ts" ] || abort "no src/main.ts: the gateway source is not there yet"
[ -f "$ROOT/scripts/wiki/setup.sh" ] || abort "no scripts/wiki/setup.sh"

# ------------------------------------------------------------------ system packages
STEP="installing system packages"
need_pkgs=()
for pair in podman:podman runc:runc debootstrap:debootstrap newuidmap:uidmap unshare:util-linux; do
  command -v "${pair%%:*}" > /dev/null 2>&1 || need_pkgs+=("${pair#*:}")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  log "installing ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || abort "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" > /dev/null ||
    abort "apt-get install ${need_pkgs[*]} failed"
fi

# ------------------------------------------------------------------ podman, own store
STEP="setting up podman"
# A store of its own, so that nothing here touches (or depends on) other podman users of
# the machine. Kernel overlayfs where the state dir allows it, vfs otherwise (overlay on
# overlay, e.g. when this machine is itself a container).
mkdir -p "$STATE"
if [ -z "${WIKIEDGE_VERIFY_STORAGE_DRIVER:-}" ]; then
  case "$(stat -f -c %T "$STATE")" in
    overlayfs | overlay) WIKIEDGE_VERIFY_STORAGE_DRIVER=vfs ;;
    *) WIKIEDGE_VERIFY_STORAGE_DRIVER=overlay ;;
  esac
fi
DRIVER=$WIKIEDGE_VERIFY_STORAGE_DRIVER
cat > "$STATE/containers.conf" << 'EOF'
# written by scripts/verify-image.sh
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
EOF
export CONTAINERS_CONF="$STATE/containers.conf"
export BUILDAH_ISOLATION=chroot
pm() {
  podman --root "$STATE/storage-$DRIVER" --runroot "$STATE/run-$DRIVER" \
    --storage-driver "$DRIVER" --cgroup-manager cgroupfs --runtime runc \
    --events-backend file "$@"
}
WORK=$(mktemp -d /tmp/wikiedge-verify.XXXXXX)
log "podman $(podman --version | awk '{print $3}'), storage driver $DRIVER, state $STATE"

# --------------------------------------------------------------------------- base image
STEP="building the stand-in base image $BASE_IMAGE"
NODE_BIN=$(readlink -f "$(command -v node)")
NODE_VERSION=$("$NODE_BIN" -p 'process.versions.node')
case "$NODE_VERSION" in 20.*) ;; *) abort "the machine's node is $NODE_VERSION, need Node 20 for a node:20 stand-in" ;; esac
NPM_DIR=""
if command -v npm > /dev/null; then
  NPM_DIR=$(readlink -f "$(command -v npm)")             # .../node_modules/npm/bin/npm-cli.js
  NPM_DIR=$(cd "$(dirname "$NPM_DIR")/.." && pwd)        # .../node_modules/npm
fi
[ -n "$NPM_DIR" ] && [ -f "$NPM_DIR/package.json" ] || abort "cannot find the npm module directory"

base_ok() {
  pm image exists "$BASE_IMAGE" || return 1
  local label
  label=$(pm image inspect --format '{{index .Labels "org.wikiedge.verify.node-version"}}' "$BASE_IMAGE" 2> /dev/null)
  # A real node image (no label) is fine too; a stand-in must match the machine's node.
  [ -z "$label" ] || [ "$label" = "<no value>" ] || [ "$label" = "$NODE_VERSION" ]
}

build_base() {
  local t rootfs
  t=$(date +%s)
  rootfs="$STATE/rootfs.tmp"
  rm -rf "$rootfs"
  log "debootstrap bookworm (minbase) from $DEBIAN_MIRROR ..."
  debootstrap --variant=minbase bookworm "$rootfs" "$DEBIAN_MIRROR" > "$WORK/debootstrap.log" 2>&1 || {
    tail -20 "$WORK/debootstrap.log" >&2
    abort "debootstrap failed (log above)"
  }
  # Node and npm where the official image has them.
  install -D -m 0755 "$NODE_BIN" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules"
  cp -a "$NPM_DIR" "$rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # The official image's entrypoint script, verbatim.
  cat > "$rootfs/usr/local/bin/docker-entrypoint.sh" << 'EOF'
#!/bin/sh
set -e

# Run command with node if the first argument contains a "-" or is not a system command. The last part inside the "{}" is a workaround for the following bug in ash/dash:
# https://bugs.debian.org/cgi-bin/bugreport.cgi?bug=874264
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi

exec "$@"
EOF
  chmod 0755 "$rootfs/usr/local/bin/docker-entrypoint.sh"
  # The official image's user: groupadd --gid 1000 node && useradd --uid 1000 --gid node ...
  chroot "$rootfs" groupadd --gid 1000 node
  chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  # env -i: the host's NODE_EXTRA_CA_CERTS etc. mean nothing inside the new root.
  chroot "$rootfs" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \
    node -e 'process.exit(0)' ||
    abort "node does not start inside the debootstrap root (missing shared library?)"
  chroot "$rootfs" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \
    npm --version > /dev/null ||
    abort "npm does not start inside the debootstrap root"
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
    "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/*.log "$rootfs"/tmp/* \
    "$rootfs"/root/.npm
  tar --numeric-owner -C "$rootfs" \
    --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf - . |
    pm import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change "ENV NODE_VERSION=$NODE_VERSION" \
      --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
      --change 'CMD ["node"]' \
      --change "LABEL org.wikiedge.verify.node-version=$NODE_VERSION" \
      --change 'LABEL org.wikiedge.verify.stand-in="debootstrap bookworm minbase + host node, built by scripts/verify-image.sh"' \
      - "$BASE_IMAGE" > /dev/null
  rm -rf "$rootfs"
  info "base image built in $(since "$t") (debootstrap + node $NODE_VERSION)"
}

# (build_base is not called in an `||` list: that would switch off set -e inside it.)
if [ "$REBUILD_BASE" = 1 ] || ! base_ok; then
  build_base
else
  info "base image $BASE_IMAGE cached"
fi

# ------------------------------------------------------------------------ project image
STEP="building the project image"
t=$(date +%s)
build_flags=(--isolation chroot --format docker --pull=never --layers)
[ "$NO_CACHE" = 1 ] && build_flags+=(--no-cache)
host_ca=${NODE_EXTRA_CA_CERTS:-}
if [ -z "$host_ca" ]; then
  host_ca=$(npm config get cafile 2> /dev/null || true)
  [ "$host_ca" = null ] || [ "$host_ca" = undefined ] && host_ca=""
fi
if [ -n "$host_ca" ] && [ -r "$host_ca" ]; then
  mkdir -p "$WORK/npm-etc"
  cp "$host_ca" "$WORK/npm-etc/host-ca.crt"
  echo "cafile=/usr/local/etc/host-ca.crt" > "$WORK/npm-etc/npmrc"
  build_flags+=(--volume "$WORK/npm-etc:/usr/local/etc:ro")
  log "build trusts the host's CA bundle $host_ca for npm (build-time mount only)"
fi
log "podman build ${build_flags[*]} -t $IMAGE $ROOT"
if pm build "${build_flags[@]}" -f "$ROOT/Dockerfile" -t "$IMAGE" "$ROOT" > "$WORK/build.log" 2>&1; then
  pass "image builds (both stages, npm ci in the build) in $(since "$t")"
else
  if grep -q 'can only install packages when your package.json and package-lock.json' "$WORK/build.log"; then
    grep -E '^(STEP|npm error (code|Missing|`npm ci`))' "$WORK/build.log" >&2
    abort "image build failed: npm ci (EUSAGE) says package-lock.json is not in sync with package.json (Missing: lines above). Fix package-lock.json so that \`npm ci --dry-run\` passes on the host, not the Dockerfile"
  fi
  grep -v '^npm error   \|^npm error$\|^npm error \[' "$WORK/build.log" | tail -40 >&2
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

# ----------------------------------------------------------- start the gateway (chroot)
STEP="running the gateway from the image"
PORT=$(free_port)
ADMIN_PORT=$(free_port)
while [ "$ADMIN_PORT" = "$PORT" ]; do ADMIN_PORT=$(free_port); done
# The image's Env, then ours on top (as `docker run -e` would).
mapfile -t ENVV < <(sed -n 's/^ENV=//p' "$WORK/config.txt")
ENVV+=(
  "WIKIEDGE_UPSTREAM=$WIKI_URL"
  "WIKIEDGE_PORT=$PORT"
  "WIKIEDGE_ADMIN_PORT=$ADMIN_PORT"
  "WIKIEDGE_LOG_LEVEL=${WIKIEDGE_LOG_LEVEL:-info}"
  "HOSTNAME=wikiedge-verify"
  "HOME=$(awk -F: -v u="$IMG_UID" '$3 == u {print $6; exit}' "$MNT/etc/passwd")"
)
mapfile -t ARGV < <(node -e '
const i = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))[0].Config;
for (const a of [...(i.Entrypoint || []), ...(i.Cmd || [])]) console.log(a);
' "$WORK/inspect.json")
[ ${#ARGV[@]} -gt 0 ] || abort "image has neither ENTRYPOINT nor CMD"

# Prefix that runs a command inside the image's root as its user, with the image's Env
# and WorkingDir, in a private mount namespace that has /dev and /proc mounted into the
# image's root (the mounts vanish with the namespace). unshare (without --fork), sh, chroot
# and env all exec, so a command started with `"${IN_IMAGE[@]}" cmd &` keeps the pid $!.
IN_IMAGE=(unshare --mount --propagation private -- /bin/sh -c '
    mnt=$1 spec=$2 wd=$3; shift 3
    mount --rbind /dev "$mnt/dev" && mount -t proc proc "$mnt/proc" || exit 125
    exec chroot --userspec="$spec" "$mnt" /usr/bin/env -i -C "$wd" "$@"
  ' in_image "$MNT" "$IMG_UID:$IMG_GID" "$IMG_WORKDIR" "${ENVV[@]}")

log "starting the gateway from the image: ${ARGV[*]} (ports $PORT/$ADMIN_PORT)"
"${IN_IMAGE[@]}" "${ARGV[@]}" > "$WORK/gateway.log" 2>&1 &
GW_PID=$!

up=0
for _ in $(seq $((START_TIMEOUT * 5))); do
  kill -0 "$GW_PID" 2> /dev/null || break
  code=$(curl -s -o "$WORK/healthz.body" -w '%{http_code}' --max-time 2 "http://127.0.0.1:$ADMIN_PORT/healthz" || true)
  if [ "$code" = 200 ]; then
    up=1
    break
  fi
  sleep 0.2
done
if [ "$up" != 1 ]; then
  tail -30 "$WORK/gateway.log" >&2
  kill -0 "$GW_PID" 2> /dev/null && abort "gateway: /healthz not 200 within ${START_TIMEOUT}s (last: ${code:-none})"
  wait "$GW_PID" && rc=0 || rc=$?
  GW_PID=""
  abort "gateway exited with status $rc before /healthz answered (log above)"
fi
if node -e 'const b = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); process.exit(b.status === "ok" ? 0 : 1)' "$WORK/healthz.body" 2> /dev/null; then
  pass "GET /healthz on the admin port: 200 {\"status\":\"ok\"}"
else
  fail "GET /healthz: 200 but body is $(head -c 200 "$WORK/healthz.body")"
fi

run_uid=$(awk '/^Uid:/ {print $2}' "/proc/$GW_PID/status" 2> /dev/null || echo "?")
run_comm=$(cat "/proc/$GW_PID/comm" 2> /dev/null || echo "?")
if [ "$run_uid" != "?" ] && [ "$run_uid" != 0 ]; then
  pass "gateway process ($run_comm, pid $GW_PID) runs as uid $run_uid"
else
  fail "gateway process runs as uid $run_uid"
fi

# The image's HEALTHCHECK, as the engine would run it: inside the image, as its user,
# with its Env.
mapfile -t HC < <(node -e '
const t = JSON.parse(process.argv[1]) || [];
if (t[0] === "CMD") t.slice(1).forEach((a) => console.log(a));
else if (t[0] === "CMD-SHELL") console.log("/bin/sh"), console.log("-c"), console.log(t[1]);
' "$IMG_HEALTH")
if [ ${#HC[@]} -gt 0 ]; then
  if "${IN_IMAGE[@]}" "${HC[@]}" > "$WORK/hc.log" 2>&1; then
    pass "the image's HEALTHCHECK command exits 0 against the running gateway"
  else
    fail "the image's HEALTHCHECK command failed: $(head -c 300 "$WORK/hc.log")"
  fi
fi

# One real api.php answer, direct and through the gateway.
d_code=$(curl -sS -o "$WORK/direct.json" -w '%{http_code}' --max-time 30 "$WIKI_URL$SITEINFO" || echo 000)
g_code=$(curl -sS -o "$WORK/gateway.json" -w '%{http_code}' --max-time 30 "http://127.0.0.1:$PORT$SITEINFO" || echo 000)
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

for p in readyz metrics; do
  c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$ADMIN_PORT/$p" || true)
  info "GET /$p on the admin port: HTTP $c"
done

# ------------------------------------------------------------------------- SIGTERM
STEP="stopping the gateway"
log "sending SIGTERM to the gateway (pid $GW_PID)"
kill -TERM "$GW_PID"
stopped=0
for _ in $(seq $((STOP_TIMEOUT * 10))); do
  if ! kill -0 "$GW_PID" 2> /dev/null; then
    stopped=1
    break
  fi
  sleep 0.1
done
if [ "$stopped" = 1 ]; then
  wait "$GW_PID" && rc=0 || rc=$?
  GW_PID=""
  if [ "$rc" = 0 ]; then
    pass "SIGTERM: gateway exited with status 0"
  else
    tail -20 "$WORK/gateway.log" >&2
    fail "SIGTERM: gateway exited with status $rc"
  fi
else
  fail "SIGTERM: gateway still running after ${STOP_TIMEOUT}s (killed)"
fi
exit 0
