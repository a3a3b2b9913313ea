#!/usr/bin/env bash
# Install the Debian packages the wikiedge test suite needs, but only those that are missing.
#
# Usage:
#   scripts/install-system-deps.sh            # the full list below
#   scripts/install-system-deps.sh PKG...     # only these (scripts/wiki/setup.sh passes its subset)
#
# Full list: mediawiki php-cli php-sqlite3 php-intl php-mbstring php-xml php-curl php-gd curl redis-server
#            prometheus (only for promtool: the test that checks the Prometheus config and every
#            PromQL expression of the Grafana dashboard; its daemon is never started)
#            python3-mwclient (a real client library in the suite: mwclient-read-modify-write)
# The container checks pass their own lists (scripts/lib/podman.sh): podman runc debootstrap
# uidmap netavark aardvark-dns iptables, and podman-compose for scripts/verify-compose.sh.
#
# * Checks each package with dpkg-query; prints nothing and exits 0 when nothing is missing.
# * Otherwise (root only): apt-get update, then apt-get install --no-install-recommends of the
#   missing ones. The `mediawiki` package depends on apache2|httpd, and redis-server has an init
#   script: a temporary /usr/sbin/policy-rc.d (exit 101) keeps maintainer scripts from starting
#   any daemon. It is only created if there is none, and removed again on exit.
# * Not root and something missing: says what is missing and exits 1.
# * All messages go to stderr. Exit status is non-zero on any failure.
set -euo pipefail

DEFAULT_PKGS=(mediawiki php-cli php-sqlite3 php-intl php-mbstring php-xml php-curl php-gd curl redis-server prometheus python3-mwclient)
if [ $# -gt 0 ]; then
  case "$1" in
    -h | --help)
      sed -n '2,21p' "$0"
      exit 0
      ;;
  esac
  PKGS=("$@")
else
  PKGS=("${DEFAULT_PKGS[@]}")
fi

log() { echo "[install-system-deps] $*" >&2; }

if ! command -v dpkg-query > /dev/null 2>&1; then
  log "dpkg-query not found: this script only knows Debian/Ubuntu"
  exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2> /dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing+=("$p") ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  log "missing packages: ${missing[*]}"
  log "not root: run as root (or: sudo $0 ${missing[*]})"
  exit 1
fi

POLICY=/usr/sbin/policy-rc.d
made_policy=0
cleanup() {
  if [ "$made_policy" = 1 ]; then rm -f "$POLICY"; fi
}
trap cleanup EXIT
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\n# temporary, from wikiedge install-system-deps.sh: start no daemons\nexit 101\n' > "$POLICY"
  chmod 755 "$POLICY"
  made_policy=1
fi

log "installing: ${missing[*]}"
t0=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2

# Verify: apt can "succeed" without installing what was asked (e.g. held packages).
still=()
for p in "${missing[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' || still+=("$p")
done
if [ ${#still[@]} -gt 0 ]; then
  log "still not installed after apt-get: ${still[*]}"
  exit 1
fi
log "installed ${#missing[@]} package(s) in $(($(date +%s) - t0)) s"
