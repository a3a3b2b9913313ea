#!/usr/bin/env bash
# Stop the php -S that scripts/wiki/setup.sh started for DATA_DIR.
#
# Usage: scripts/wiki/stop.sh DATA_DIR [--purge]
#   --purge   also delete DATA_DIR (only if it carries setup.sh's marker file .wikiedge-wiki)
#
# Only the process group recorded in DATA_DIR/php-server.pid is signalled, and only after
# checking that the pid's command line is `php -S ... DATA_DIR/router.php` (pids get reused).
# SIGTERM to the group (master + PHP_CLI_SERVER_WORKERS workers), SIGKILL after 5 s.
# Exit status 0 when nothing of ours is left running (also when it was not running).
set -uo pipefail

DATA=
PURGE=0
for a in "$@"; do
  case "$a" in
    --purge) PURGE=1 ;;
    -h | --help)
      sed -n '2,10p' "$0"
      exit 0
      ;;
    -*)
      echo "[stop] unknown option $a" >&2
      exit 2
      ;;
    *) DATA=$a ;;
  esac
done
if [ -z "$DATA" ]; then
  echo "usage: $0 DATA_DIR [--purge]" >&2
  exit 2
fi
if [ ! -d "$DATA" ]; then
  echo "[stop] no such directory: $DATA" >&2
  exit 0
fi
DATA=$(cd "$DATA" && pwd -P)
PIDF=$DATA/php-server.pid
rc=0

is_ours() {
  pid_alive "$1" && tr '\0' ' ' < "/proc/$1/cmdline" 2> /dev/null | grep -qF -- "$DATA/router.php"
}
# any non-zombie process in process group $1 (a killed master may linger as a zombie until its
# new parent reaps it, and kill -0 succeeds on zombies)
group_alive() { ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { f = 1 } END { exit !f }'; }
pid_alive() { kill -0 "$1" 2> /dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2> /dev/null; }
alive() { if [ "$target" = "-$pid" ]; then group_alive "$pid"; else pid_alive "$pid"; fi; }

if [ -f "$PIDF" ]; then
  pid=$(cat "$PIDF" 2> /dev/null || true)
  if ! [[ $pid =~ ^[0-9]+$ ]]; then
    echo "[stop] bad pid file $PIDF" >&2
  elif is_ours "$pid"; then
    # setsid made the server a group leader (pgid = pid); fall back to the pid alone if not.
    if [ "$(ps -o pgid= -p "$pid" | tr -d ' ')" = "$pid" ]; then target="-$pid"; else target=$pid; fi
    kill -TERM -- "$target" 2> /dev/null
    for _ in $(seq 1 50); do
      alive || break
      sleep 0.1
    done
    if alive; then
      kill -KILL -- "$target" 2> /dev/null
      sleep 0.3
    fi
    if alive; then
      echo "[stop] php -S (pid $pid) still alive" >&2
      rc=1
    else
      echo "[stop] stopped php -S (pid $pid)" >&2
    fi
  elif kill -0 "$pid" 2> /dev/null; then
    echo "[stop] pid $pid is not our php -S; not touching it" >&2
  else
    echo "[stop] not running (stale pid $pid)" >&2
  fi
  [ "$rc" = 0 ] && rm -f "$PIDF"
else
  echo "[stop] no pid file in $DATA" >&2
fi

if [ "$PURGE" = 1 ]; then
  if [ "$rc" != 0 ]; then
    echo "[stop] not purging $DATA: the server is still running" >&2
  elif [ ! -f "$DATA/.wikiedge-wiki" ] || [ "$DATA" = / ]; then
    echo "[stop] refusing to purge $DATA: no .wikiedge-wiki marker (not made by setup.sh)" >&2
    rc=1
  else
    rm -rf -- "$DATA" && echo "[stop] removed $DATA" >&2
  fi
fi
exit "$rc"
