# shellcheck shell=bash
# Shared by scripts/verify-image.sh and scripts/verify-compose.sh (sourced, not run): a podman of
# our own on a machine with no Docker engine and no reachable container registry.
#
#   podman_setup         installs what is missing (scripts/install-system-deps.sh), writes the
#                        containers.conf and storage.conf of our own store, exports them, so
#                        that every podman (and podman-compose's) call of this shell uses it
#   ensure_base_image    the stand-in for node:${NODE_MAJOR}-bookworm-slim (debootstrap + this
#                        machine's node), built once and cached; sets BASE_IMAGE, NODE_MAJOR
#   build_project_image  podman build of ./Dockerfile with --build-arg NODE_VERSION=$NODE_MAJOR
#
# The caller defines log, info and abort, and sets ROOT and WORK (a temp dir it removes).
#
# Store: WIKIEDGE_VERIFY_STATE (default /var/tmp/wikiedge-verify): images, the cached base,
# podman's networks (network_config_dir, so that nothing here touches /etc/containers/networks
# or other podman users of the machine). Delete the directory to reclaim the space.
#
# Rlimits: `podman run` fails in this sandbox with podman's default rlimits (it asks for a
# nofile/nproc hard limit above what the sandbox grants), so containers.conf lowers them with
# default_ulimits (nofile 16384, nproc 4096); podman-compose's containers get them too.
#
# Network backend: netavark + aardvark-dns (containers on a compose network find each other by
# service name, as with Docker's embedded DNS; the CNI backend needs a dnsname plugin for that).
# netavark 1.4 sets up each network's NAT and forwarding with the iptables command, which a
# minimal Debian lacks: without it every container of a compose network fails to start with
# "netavark: No such file or directory (os error 2)" (seen on a fresh machine).

STATE=${WIKIEDGE_VERIFY_STATE:-/var/tmp/wikiedge-verify}
DEBIAN_MIRROR=${WIKIEDGE_VERIFY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
REBUILD_BASE=${WIKIEDGE_VERIFY_REBUILD_BASE:-0}
NO_CACHE=${WIKIEDGE_VERIFY_NO_CACHE:-0}

since() { echo "$(($(date +%s) - $1))s"; }

podman_setup() {
  [ "$(id -u)" -eq 0 ] || abort "must run as root (debootstrap, podman with its own store)"
  bash "$ROOT/scripts/install-system-deps.sh" podman runc debootstrap uidmap netavark aardvark-dns iptables "$@" ||
    abort "scripts/install-system-deps.sh podman runc debootstrap uidmap netavark aardvark-dns iptables $* failed"
  mkdir -p "$STATE/networks"
  # Kernel overlayfs where the state dir allows it, vfs otherwise (overlay on overlay, e.g. when
  # this machine is itself a container).
  if [ -z "${WIKIEDGE_VERIFY_STORAGE_DRIVER:-}" ]; then
    case "$(stat -f -c %T "$STATE")" in
      overlayfs | overlay) WIKIEDGE_VERIFY_STORAGE_DRIVER=vfs ;;
      *) WIKIEDGE_VERIFY_STORAGE_DRIVER=overlay ;;
    esac
  fi
  DRIVER=$WIKIEDGE_VERIFY_STORAGE_DRIVER
  cat > "$STATE/containers.conf" << EOF
# written by scripts/lib/podman.sh
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=4096:4096"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
[network]
network_backend = "netavark"
network_config_dir = "$STATE/networks"
EOF
  cat > "$STATE/storage.conf" << EOF
# written by scripts/lib/podman.sh
[storage]
driver = "$DRIVER"
graphroot = "$STATE/storage-$DRIVER"
runroot = "$STATE/run-$DRIVER"
EOF
  export CONTAINERS_CONF="$STATE/containers.conf"
  export CONTAINERS_STORAGE_CONF="$STATE/storage.conf"
  export BUILDAH_ISOLATION=chroot
  log "podman $(podman --version | awk '{print $3}'), storage driver $DRIVER, state $STATE"
}

pm() { podman "$@"; }

# ------------------------------------------------------------------------ the stand-in base
# node:${NODE_MAJOR}-bookworm-slim cannot be pulled, so it is built once: debootstrap
# --variant=minbase bookworm + this machine's own node binary and npm + the official image's
# `node` user (uid/gid 1000), docker-entrypoint.sh, ENTRYPOINT and CMD. It is `podman import`ed
# under the official name, so the Dockerfile's FROM resolves locally with --pull=never.
# Rebuilt only when missing or when the machine's node version changed.
ensure_base_image() {
  command -v node > /dev/null || abort "node not found on PATH"
  NODE_BIN=$(readlink -f "$(command -v node)")
  NODE_FULL=$("$NODE_BIN" -p 'process.versions.node')
  NODE_MAJOR=${NODE_FULL%%.*}
  BASE_IMAGE=docker.io/library/node:$NODE_MAJOR-bookworm-slim
  NPM_DIR=""
  if command -v npm > /dev/null; then
    NPM_DIR=$(readlink -f "$(command -v npm)")      # .../node_modules/npm/bin/npm-cli.js
    NPM_DIR=$(cd "$(dirname "$NPM_DIR")/.." && pwd) # .../node_modules/npm
  fi
  [ -n "$NPM_DIR" ] && [ -f "$NPM_DIR/package.json" ] || abort "cannot find the npm module directory"
  # (build_base is not called in an `||` list: that would switch off set -e inside it.)
  if [ "$REBUILD_BASE" = 1 ] || ! base_ok; then
    build_base
  else
    info "base image $BASE_IMAGE cached (stand-in: debootstrap bookworm + node $NODE_FULL)"
  fi
}

base_ok() {
  pm image exists "$BASE_IMAGE" || return 1
  local label
  label=$(pm image inspect --format '{{index .Labels "org.wikiedge.verify.node-version"}}' "$BASE_IMAGE" 2> /dev/null)
  # A real node image (no label) is fine too; a stand-in must match the machine's node.
  [ -z "$label" ] || [ "$label" = "<no value>" ] || [ "$label" = "$NODE_FULL" ]
}

build_base() {
  local t rootfs
  t=$(date +%s)
  rootfs="$STATE/rootfs.tmp"
  # A run killed inside debootstrap leaves its root, and may leave /proc and /sys mounted in it:
  # unmount those (deepest first) and never let rm cross into them.
  awk -v r="$rootfs/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l 2> /dev/null || true
  rm -rf --one-file-system "$rootfs"
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
      --change "ENV NODE_VERSION=$NODE_FULL" \
      --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
      --change 'CMD ["node"]' \
      --change "LABEL org.wikiedge.verify.node-version=$NODE_FULL" \
      --change 'LABEL org.wikiedge.verify.stand-in="debootstrap bookworm minbase + host node, built by scripts/lib/podman.sh"' \
      - "$BASE_IMAGE" > /dev/null
  rm -rf "$rootfs"
  info "base image $BASE_IMAGE built in $(since "$t") (stand-in: debootstrap bookworm + node $NODE_FULL)"
}

# ------------------------------------------------------------------------ the project image
# build_project_image IMAGE: ./Dockerfile with --build-arg NODE_VERSION=$NODE_MAJOR, so that its
# FROM node:${NODE_VERSION}-bookworm-slim is the stand-in above.
# Network during the build: chroot isolation creates no network namespace, so `RUN npm ci` uses
# the host's network and DNS and reaches the same npm registry as `npm ci` on this machine. What
# it lacks is the host's *trust*: on these machines HTTPS to the registry goes through a
# TLS-intercepting proxy whose CA the host adds via NODE_EXTRA_CA_CERTS, so inside the build npm
# fails with SELF_SIGNED_CERT_IN_CHAIN (and retries for ~10 minutes). When the host's node/npm
# trusts an extra CA (NODE_EXTRA_CA_CERTS or `npm config get cafile`), the build gets a read-only
# bind mount on /usr/local/etc (npm's global config dir, empty in the base image) holding a copy
# of that CA bundle and an npmrc with `cafile=` pointing at it. Build-time `--volume`s are not
# committed, so no trace of it lands in any layer; the Dockerfile stays what a Docker engine
# builds. Docker format, because the OCI format silently drops HEALTHCHECK.
# Sets BUILD_SECONDS. Returns the build's status; the log is $WORK/build.log.
build_project_image() {
  local image=$1 t host_ca flags
  t=$(date +%s)
  flags=(--isolation chroot --format docker --pull=never --layers --build-arg "NODE_VERSION=$NODE_MAJOR")
  # The commit wikiedge_build_info reports (the build context has no .git).
  SOURCE_COMMIT=$(git -C "$ROOT" rev-parse HEAD 2> /dev/null || echo unknown)
  flags+=(--build-arg "SOURCE_COMMIT=$SOURCE_COMMIT")
  [ "$NO_CACHE" = 1 ] && flags+=(--no-cache)
  host_ca=${NODE_EXTRA_CA_CERTS:-}
  if [ -z "$host_ca" ]; then
    host_ca=$(npm config get cafile 2> /dev/null || true)
    { [ "$host_ca" = null ] || [ "$host_ca" = undefined ]; } && host_ca=""
  fi
  if [ -n "$host_ca" ] && [ -r "$host_ca" ]; then
    mkdir -p "$WORK/npm-etc"
    cp "$host_ca" "$WORK/npm-etc/host-ca.crt"
    echo "cafile=/usr/local/etc/host-ca.crt" > "$WORK/npm-etc/npmrc"
    flags+=(--volume "$WORK/npm-etc:/usr/local/etc:ro")
    log "build trusts the host's CA bundle $host_ca for npm (build-time mount only)"
  fi
  log "podman build ${flags[*]} -t $image $ROOT"
  local rc=0
  pm build "${flags[@]}" -f "$ROOT/Dockerfile" -t "$image" "$ROOT" > "$WORK/build.log" 2>&1 || rc=$?
  BUILD_SECONDS=$(since "$t")
  if [ "$rc" != 0 ]; then
    if grep -q 'can only install packages when your package.json and package-lock.json' "$WORK/build.log"; then
      grep -E '^(STEP|npm error (code|Missing|`npm ci`))' "$WORK/build.log" >&2
      log "npm ci (EUSAGE) says package-lock.json is not in sync with package.json (Missing: lines above): fix package-lock.json so that \`npm ci --dry-run\` passes on the host, not the Dockerfile"
    else
      grep -v '^npm error   \|^npm error$\|^npm error \[' "$WORK/build.log" | tail -40 >&2
    fi
  fi
  return "$rc"
}
