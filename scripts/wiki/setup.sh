#!/usr/bin/env bash
# Stand up a throw-away MediaWiki 1.39 (Debian's `mediawiki` package) on SQLite for the wikiedge
# integration tests, served by `php -S` at http://127.0.0.1:PORT/w/api.php.
#
# Usage: scripts/wiki/setup.sh [options]        (works from any cwd)
#   --data DIR           data folder; everything lives there (default: a new mktemp -d)
#   --port N             listen port (default: DIR/port if set and free, else a free port)
#   --workers N          PHP_CLI_SERVER_WORKERS (default 4)
#   --debug | --no-debug $wgDebugToolbar ("debuginfo" in API results)          [lab.json: debug]
#   --badges Q1,Q2       badge items of action=wbavailablebadges ('' = none)   [lab.json: badges]
#   --trust-proxy IP[,IP] $wgCdnServersNoPurge (trusted for X-Forwarded-For)   [lab.json: trustProxy]
#   --cdn HOST:PORT[,..] $wgCdnServers (MediaWiki sends PURGE through it)      [lab.json: cdn]
#                        $wgUseCdn stays false; `toggle.sh DIR useCdn=true` sets it.
#   --wikibase           also load test/wiki-extension/WikiedgeWikibase, a stand-in for Wikibase
#                        Repository REL1_39 (items in 120 Item:, properties in 122 Property:),
#                        seeded with P1-P5 and Q1-Q7; wbavailablebadges answers Q4,Q5 unless
#                        --badges says otherwise. See that folder's README.md.
#   --wikibase-items-in-main  like --wikibase, but items are pages Q1.. in namespace 0 (as on
#                        Wikidata); properties stay in 122. The layout is fixed on the first run
#                        of a DIR (DIR/wikibase.layout); a later run with another layout fails.
#   --restart            restart php -S even if it is running
#   --no-start           configure only; do not start (or restart) php -S
#
# Stdout, on success, exactly:   WIKI_URL=http://127.0.0.1:PORT
#                                WIKI_DATA=/abs/data/dir
# Everything else goes to stderr. DIR/port holds the port.
#
# Idempotent, safe to run again on the same DIR: install.php runs only if DIR/LocalSettings.php
# is missing, accounts and seed files are made once, a running php -S for DIR is kept (restarted
# only on --restart or a different --port). Toggle options update DIR/lab.json, which is read on
# every request, so they apply at once; toggles not given keep their value (first run: off/empty).
# Flip them later with scripts/wiki/toggle.sh. Stop with scripts/wiki/stop.sh DIR [--purge].
#
# The wiki: $wgScriptPath=/w, $wgCookiePrefix=wiki (wiki_session, wikiUserID, ...), uploads on,
# $wgUseImageMagick=false, extension test/wiki-extension/WikiedgeBadges (action=wbavailablebadges).
# Seed: File:Lab-{red,green,blue,kept}.png imported, the first three deleted -> 3 filearchive rows.
# Accounts (env overrides, read on the first run):
#   WIKI_ADMIN_USER=Admin     WIKI_ADMIN_PASS=Adm1n-Lab-Passw0rd!   (sysop, bureaucrat, interface-admin)
#   WIKI_USER_NAME=LabUser    WIKI_USER_PASS=User-Lab-Passw0rd!     (plain user)
#   a bot password of $ADMIN_USER: WIKI_BOT_APPID=wikiedge (login name Admin@wikiedge),
#   WIKI_BOT_PASS=wikiedgebotpasswordforthetests00 (32 characters of [0-9a-w]: BotPassword::canonicalizeLoginData), grants basic,highvolume,editpage
#   (BotPasswordSessionProvider: logging in with it gives a {prefix}_BPsession cookie)
# Files in DIR: router.php appends "METHOD URI" per request to logs/requests.log (requests carrying
# the header X-Wikiedge-Probe, i.e. this script's own readiness probes, are not logged);
# php-server.pid (pid = process group of php -S and its workers); logs/php-server.log.
# Packages (mediawiki, php-*, curl) are installed by scripts/install-system-deps.sh when missing.
set -euo pipefail

# stdout is reserved for the two result lines: keep it on fd 3, send everything else to stderr.
exec 3>&1 1>&2

SELF_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SELF_DIR/../.." && pwd)
EXT_JSON=$REPO/test/wiki-extension/WikiedgeBadges/extension.json
WB_SETTINGS=$REPO/test/wiki-extension/WikiedgeWikibase/WikibaseSettings.php
MW=/usr/share/mediawiki
T_START=$(date +%s%N)

DATA=
PORT=
WORKERS=4
RESTART=0
WIKIBASE=
START=1
TOGGLES=()
ADMIN_USER=${WIKI_ADMIN_USER:-Admin}
ADMIN_PASS=${WIKI_ADMIN_PASS:-Adm1n-Lab-Passw0rd!}
USER_NAME=${WIKI_USER_NAME:-LabUser}
USER_PASS=${WIKI_USER_PASS:-User-Lab-Passw0rd!}
BOT_APPID=${WIKI_BOT_APPID:-wikiedge}
BOT_PASS=${WIKI_BOT_PASS:-wikiedgebotpasswordforthetests00}

need_arg() { [ $# -ge 2 ] || {
  echo "[setup] $1 needs a value" >&2
  exit 2
}; }
while [ $# -gt 0 ]; do
  case "$1" in
    --data) need_arg "$@"; DATA=$2; shift 2 ;;
    --data=*) DATA=${1#*=}; shift ;;
    --port) need_arg "$@"; PORT=$2; shift 2 ;;
    --port=*) PORT=${1#*=}; shift ;;
    --workers) need_arg "$@"; WORKERS=$2; shift 2 ;;
    --debug) TOGGLES+=(debug=true); shift ;;
    --no-debug) TOGGLES+=(debug=false); shift ;;
    --badges) need_arg "$@"; TOGGLES+=("badges=$2"); shift 2 ;;
    --badges=*) TOGGLES+=("badges=${1#*=}"); shift ;;
    --trust-proxy) need_arg "$@"; TOGGLES+=("trustProxy=$2"); shift 2 ;;
    --trust-proxy=*) TOGGLES+=("trustProxy=${1#*=}"); shift ;;
    --cdn) need_arg "$@"; TOGGLES+=("cdn=$2"); shift 2 ;;
    --cdn=*) TOGGLES+=("cdn=${1#*=}"); shift ;;
    --wikibase) WIKIBASE=items-in-120; shift ;;
    --wikibase-items-in-main) WIKIBASE=items-in-main; shift ;;
    --restart) RESTART=1; shift ;;
    --no-start) START=0; shift ;;
    -h | --help) sed -n '2,43p' "$0"; exit 0 ;;
    *) echo "[setup] unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$PORT" ] && ! [[ $PORT =~ ^[0-9]+$ ]]; then echo "[setup] bad --port: $PORT" >&2; exit 2; fi
if ! [[ $WORKERS =~ ^[0-9]+$ ]]; then echo "[setup] bad --workers: $WORKERS" >&2; exit 2; fi

log() { echo "[setup $(date +%T)] $*" >&2; }
elapsed() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN{printf "%.1f", (b-a)/1e9}'; }

# ---------------------------------------------------------------- packages
bash "$REPO/scripts/install-system-deps.sh" mediawiki php-cli php-sqlite3 php-intl php-mbstring php-xml \
  php-curl php-gd curl
[ -f "$MW/includes/Defines.php" ] || { log "no MediaWiki in $MW"; exit 1; }

# ---------------------------------------------------------------- data dir + lock
if [ -z "$DATA" ]; then
  DATA=$(mktemp -d "${TMPDIR:-/tmp}/wikiedge-wiki.XXXXXX")
fi
mkdir -p "$DATA"
DATA=$(cd "$DATA" && pwd -P)
LS=$DATA/LocalSettings.php
PIDF=$DATA/php-server.pid
touch "$DATA/.wikiedge-wiki" # marker: stop.sh --purge only deletes folders carrying it
mkdir -p "$DATA"/{db,images,cache,tmp,logs,docroot,seed}
# One setup.sh at a time per DIR. fd 9 is closed for php -S below, so the lock dies with us.
exec 9> "$DATA/.setup.lock"
flock -w 300 9 || { log "another setup.sh holds $DATA/.setup.lock"; exit 1; }

# ---------------------------------------------------------------- helpers
free_port() {
  php -r '$s = stream_socket_server("tcp://127.0.0.1:0", $en, $es) or exit(1);
    $n = stream_socket_get_name($s, false); echo substr($n, strrpos($n, ":") + 1), "\n";'
}
port_free() {
  php -r '$s = @stream_socket_server("tcp://127.0.0.1:" . $argv[1], $en, $es); exit($s ? 0 : 1);' "$1"
}
# pid from php-server.pid if that process is our php -S for this DIR (pid reuse is checked)
our_pid() {
  local pid
  [ -f "$PIDF" ] || return 1
  pid=$(cat "$PIDF" 2> /dev/null) || return 1
  case "$pid" in '' | *[!0-9]*) return 1 ;; esac
  kill -0 "$pid" 2> /dev/null || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null | grep -qF -- "$DATA/router.php" || return 1
  echo "$pid"
}
probe() { # probe URL_PATH_AND_QUERY -> body on stdout
  curl -fsS --max-time 30 -H 'X-Wikiedge-Probe: 1' "http://127.0.0.1:$PORT$1"
}
is_us() { # does the server on $PORT serve this DIR?
  [ "$(probe /__wikiedge/whoami 2> /dev/null)" = "$DATA" ]
}

# ---------------------------------------------------------------- Wikibase stand-in layout
# Fixed per DIR: entity pages cannot move between layouts. A run without a --wikibase flag keeps
# the recorded layout (like the toggles).
if [ -f "$DATA/wikibase.layout" ]; then
  RECORDED=$(cat "$DATA/wikibase.layout")
  if [ -n "$WIKIBASE" ] && [ "$WIKIBASE" != "$RECORDED" ]; then
    log "$DATA was set up with layout $RECORDED; cannot switch to $WIKIBASE (use a new --data)"
    exit 2
  fi
  WIKIBASE=$RECORDED
elif [ -n "$WIKIBASE" ]; then
  if [ -f "$LS" ]; then
    log "$DATA is an existing wiki without Wikibase; --wikibase needs a new --data"
    exit 2
  fi
  # the stand-in's default badge items (the reference wiki's badgeItems: Q4, Q5)
  if ! printf '%s\n' ${TOGGLES[@]+"${TOGGLES[@]}"} | grep -q '^badges='; then TOGGLES+=(badges=Q4,Q5); fi
  echo "$WIKIBASE" > "$DATA/wikibase.layout"
fi

# ---------------------------------------------------------------- port
RUNNING_PID=$(our_pid || true)
RUNNING_PORT=$(cat "$DATA/port" 2> /dev/null || true)
AUTO_PORT=0
if [ -z "$PORT" ]; then
  if [ -n "$RUNNING_PID" ] && [ -n "$RUNNING_PORT" ]; then
    PORT=$RUNNING_PORT
  elif [ -n "$RUNNING_PORT" ] && port_free "$RUNNING_PORT"; then
    PORT=$RUNNING_PORT
  else
    PORT=$(free_port)
    AUTO_PORT=1
  fi
fi
SERVER=http://127.0.0.1:$PORT

MWVER=$(sed -n "s/^define( 'MW_VERSION', '\(.*\)' );/\1/p" "$MW/includes/Defines.php")
log "MediaWiki ${MWVER:-?}, PHP $(php -r 'echo PHP_VERSION;'), data $DATA"

# ---------------------------------------------------------------- install.php (once)
if [ ! -f "$LS" ]; then
  log "running install.php"
  t0=$(date +%s%N)
  # A previous run may have died half-way: start from a clean db and seed state.
  rm -rf "$DATA/db" "$DATA/images" "$DATA/cache" "$DATA/install" "$DATA/.users_done" "$DATA/.seed_done"
  mkdir -p "$DATA/db" "$DATA/images" "$DATA/cache" "$DATA/install"
  # --confpath: LocalSettings.php is written into DATA/install (not /etc/mediawiki); it is moved
  # into place only once complete, so its existence means "installed".
  if ! php "$MW/maintenance/install.php" --quiet \
    --dbtype sqlite --dbpath "$DATA/db" --dbname wikiedge \
    --server "$SERVER" --scriptpath /w --confpath "$DATA/install" \
    --lang en --pass "$ADMIN_PASS" WikiedgeLab "$ADMIN_USER" > "$DATA/logs/install.log" 2>&1; then
    cat "$DATA/logs/install.log" >&2
    log "install.php failed"
    exit 1
  fi
  cat >> "$DATA/install/LocalSettings.php" << 'EOF'

# ---- wikiedge: overrides and runtime toggles (generated by scripts/wiki/setup.sh) ----
require __DIR__ . '/WikiedgeSettings.php';
EOF
  mv "$DATA/install/LocalSettings.php" "$LS"
  rmdir "$DATA/install" 2> /dev/null || true
  log "install.php done in $(elapsed "$t0") s"
fi

# ---------------------------------------------------------------- WikiedgeSettings.php + lab.json
# php -S runs with OPcache on and opcache.revalidate_freq=2: a rewritten *.php config can be
# served stale for ~2 s per worker. So this file is static (rewritten only when its content
# changes) and the toggles live in lab.json, read with file_get_contents() on every request.
write_if_changed() { # write_if_changed FILE  (content on stdin)
  cat > "$1.new"
  if cmp -s "$1.new" "$1"; then rm -f "$1.new"; else mv "$1.new" "$1"; fi
}
php -r 'echo str_replace(["@EXT_JSON@", "@WB_SETTINGS@"], [var_export($argv[1], true), var_export($argv[2], true)],
  stream_get_contents(STDIN));' "$EXT_JSON" "$WB_SETTINGS" << 'PHPEOF' | write_if_changed "$DATA/WikiedgeSettings.php"
<?php
// Generated by wikiedge scripts/wiki/setup.sh (static). Runtime toggles: lab.json, this folder.
$wikiedgeLab = json_decode( (string)@file_get_contents( __DIR__ . '/lab.json' ), true );
if ( !is_array( $wikiedgeLab ) ) {
	$wikiedgeLab = [];
}
if ( !empty( $wikiedgeLab['server'] ) ) {
	$wgServer = $wikiedgeLab['server'];
}
$wgScriptPath = '/w';
$wgCookiePrefix = 'wiki';                // cookies: wiki_session, wikiUserID, wikiUserName, wikiToken
$wgEnableUploads = true;                 // so files, deleted files and list=filearchive exist
$wgUploadDirectory = __DIR__ . '/images';
$wgUploadPath = '/images';               // served as static files by router.php
$wgUseImageMagick = false;               // don't depend on whatever `convert` is on PATH
$wgCacheDirectory = __DIR__ . '/cache';  // Debian's PlatformSettings.php points at /var/cache/mediawiki
$wgTmpDirectory = __DIR__ . '/tmp';
$wgDBerrorLog = __DIR__ . '/logs/dberror.log';
$wgDebugLogGroups['exception'] = __DIR__ . '/logs/exception.log';
$wgDebugLogGroups['error'] = __DIR__ . '/logs/error.log';
$wgDebugLogGroups['fatal'] = __DIR__ . '/logs/fatal.log';
$wgEnableEmail = false;
// debug: MWDebug::setup() -> ApiMain adds "debuginfo" to successful results
// (MWDebug::setup() does nothing when $wgUseCdn or $wgUseFileCache is true).
$wgDebugToolbar = !empty( $wikiedgeLab['debug'] );
if ( !empty( $wikiedgeLab['debugLog'] ) ) {
	$wgDebugLogFile = __DIR__ . '/logs/debug.log';
}
$wgUseCdn = !empty( $wikiedgeLab['useCdn'] );
$wgCdnServers = array_values( array_filter( (array)( $wikiedgeLab['cdn'] ?? [] ), 'is_string' ) );
$wgCdnServersNoPurge = array_values( array_filter( (array)( $wikiedgeLab['trustProxy'] ?? [] ), 'is_string' ) );

// action=wbavailablebadges (stand-in for Wikibase's module, see the extension's README.md)
wfLoadExtension( 'WikiedgeBadges', @EXT_JSON@ );
// lab.json "badges": a list of item ids, or a map item id => CSS class like Wikibase's badgeItems
$wgWikiedgeBadgesBadgeItems = [];
foreach ( (array)( $wikiedgeLab['badges'] ?? [] ) as $k => $v ) {
	if ( is_int( $k ) ) {
		$wgWikiedgeBadgesBadgeItems[(string)$v] = '';
	} else {
		$wgWikiedgeBadgesBadgeItems[$k] = (string)$v;
	}
}

// setup.sh --wikibase / --wikibase-items-in-main: the Wikibase stand-in (layout in wikibase.layout)
if ( is_file( __DIR__ . '/wikibase.layout' ) ) {
	$wikiedgeWikibaseItemsInMain = trim( (string)file_get_contents( __DIR__ . '/wikibase.layout' ) ) === 'items-in-main';
	require @WB_SETTINGS@;
}
PHPEOF

bash "$SELF_DIR/toggle.sh" "$DATA" "server=$SERVER" ${TOGGLES[@]+"${TOGGLES[@]}"}
log "lab.json: $(php -r '$j = json_decode(file_get_contents($argv[1]), true); unset($j["server"]); echo json_encode($j, JSON_UNESCAPED_SLASHES);' "$DATA/lab.json")"

# ---------------------------------------------------------------- accounts (once)
if [ ! -f "$DATA/.users_done" ]; then
  t0=$(date +%s%N)
  # install.php already made $ADMIN_USER (sysop, bureaucrat, interface-admin).
  # --force: a half-finished earlier run may have created the account already.
  php "$MW/maintenance/createAndPromote.php" --conf "$LS" --force "$USER_NAME" "$USER_PASS" \
    > "$DATA/logs/accounts.log" 2>&1 || {
    cat "$DATA/logs/accounts.log" >&2
    log "createAndPromote.php failed"
    exit 1
  }
  touch "$DATA/.users_done"
  log "account $USER_NAME created in $(elapsed "$t0") s"
fi

# ---------------------------------------------------------------- bot password (once)
if [ ! -f "$DATA/.botpass_done" ]; then
  php "$MW/maintenance/createBotPassword.php" --conf "$LS" --appid "$BOT_APPID" --grants basic,highvolume,editpage \
    "$ADMIN_USER" "$BOT_PASS" > "$DATA/logs/botpass.log" 2>&1 || {
    cat "$DATA/logs/botpass.log" >&2
    log "createBotPassword.php failed"
    exit 1
  }
  touch "$DATA/.botpass_done"
  log "bot password $ADMIN_USER@$BOT_APPID created"
fi

# ---------------------------------------------------------------- seed: uploads + deletions (once)
if [ ! -f "$DATA/.seed_done" ]; then
  t0=$(date +%s%N)
  rm -rf "$DATA/seed"
  mkdir -p "$DATA/seed/png"
  php -r '
    foreach (["Lab-red" => [255, 0, 0], "Lab-green" => [0, 160, 0], "Lab-blue" => [0, 0, 255],
      "Lab-kept" => [90, 90, 90]] as $n => $c) {
      $im = imagecreatetruecolor(8 + strlen($n), 8);
      imagefill($im, 0, 0, imagecolorallocate($im, $c[0], $c[1], $c[2]));
      imagepng($im, $argv[1] . "/$n.png") or exit(1);
    }' "$DATA/seed/png"
  printf 'File:Lab-red.png\nFile:Lab-green.png\nFile:Lab-blue.png\n' > "$DATA/seed/delete.txt"
  {
    php "$MW/maintenance/importImages.php" --conf "$LS" --user "$ADMIN_USER" \
      --comment "wikiedge seed upload" --extensions png --skip-dupes "$DATA/seed/png" &&
      php "$MW/maintenance/deleteBatch.php" --conf "$LS" -u "$ADMIN_USER" -r "wikiedge seed delete" \
        "$DATA/seed/delete.txt" &&
      php "$MW/maintenance/runJobs.php" --conf "$LS" --quiet
  } > "$DATA/logs/seed.log" 2>&1 || {
    cat "$DATA/logs/seed.log" >&2
    log "seeding failed"
    exit 1
  }
  touch "$DATA/.seed_done"
  log "seeded 4 uploads, 3 deleted, in $(elapsed "$t0") s"
fi

# ---------------------------------------------------------------- seed: Wikibase entities (once)
if [ -n "$WIKIBASE" ] && [ ! -f "$DATA/.wikibase_seed_done" ]; then
  t0=$(date +%s%N)
  {
    MW_INSTALL_PATH=$MW php "$REPO/test/wiki-extension/WikiedgeWikibase/maintenance/seed.php" --conf "$LS" \
      --user "$ADMIN_USER" &&
      php "$MW/maintenance/runJobs.php" --conf "$LS" --quiet
  } > "$DATA/logs/wikibase-seed.log" 2>&1 || {
    cat "$DATA/logs/wikibase-seed.log" >&2
    log "seeding the Wikibase stand-in failed"
    exit 1
  }
  touch "$DATA/.wikibase_seed_done"
  log "Wikibase stand-in ($WIKIBASE) seeded in $(elapsed "$t0") s: $(tail -n 1 "$DATA/logs/wikibase-seed.log")"
fi

# ---------------------------------------------------------------- router + docroot
ln -sfn "$MW" "$DATA/docroot/w"
ln -sfn "$DATA/images" "$DATA/docroot/images"
write_if_changed "$DATA/router.php" << 'PHPEOF'
<?php
// Generated by wikiedge scripts/wiki/setup.sh. php -S router: MediaWiki entry points under /w/
// are executed, any other .php is 404, everything else is a static file from ./docroot.
define( 'MW_CONFIG_FILE', __DIR__ . '/LocalSettings.php' );
// One line per request reaching the wiki, so tests can count upstream traffic.
// setup.sh's own readiness probes (header X-Wikiedge-Probe) are not counted.
if ( !isset( $_SERVER['HTTP_X_WIKIEDGE_PROBE'] ) ) {
	file_put_contents( __DIR__ . '/logs/requests.log',
		$_SERVER['REQUEST_METHOD'] . ' ' . $_SERVER['REQUEST_URI'] . "\n", FILE_APPEND | LOCK_EX );
}
// Route the way a web server does (Apache, nginx and php -S itself decode the path, merge `//`,
// resolve `.`/`..`), and match the entry point's name case-insensitively like a server on a
// case-insensitive file system: every spelling some server would map to api.php reaches it here,
// so the gateway's tests see what such a server would do with it.
$path = rawurldecode( (string)parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) );
$segments = [];
foreach ( explode( '/', str_replace( '\\', '/', $path ) ) as $seg ) {
	if ( $seg === '' || $seg === '.' ) { continue; }
	if ( $seg === '..' ) { array_pop( $segments ); continue; }
	$segments[] = $seg;
}
$path = '/' . implode( '/', $segments ) . ( substr( $path, -1 ) === '/' && $segments ? '/' : '' );
if ( $path === '/__wikiedge/whoami' ) {
	// lets setup.sh check that the server on the port is this data folder's
	header( 'Content-Type: text/plain' );
	echo __DIR__, "\n";
	return true;
}
if ( preg_match( '#^/w/(api|index|load|rest|thumb|thumb_handler|img_auth|opensearch_desc)\.php(/.*)?$#i', $path, $m ) ) {
	chdir( '/usr/share/mediawiki' );
	require '/usr/share/mediawiki/' . strtolower( $m[1] ) . '.php';
	return true;
}
if ( $path === '/' || $path === '/w' || $path === '/w/' ) {
	header( 'Location: /w/index.php', true, 302 );
	return true;
}
if ( substr( $path, -4 ) === '.php' || strpos( $path, '..' ) !== false ) {
	http_response_code( 404 );
	echo "Not found\n";
	return true;
}
return false;
PHPEOF
touch "$DATA/logs/requests.log"

# ---------------------------------------------------------------- php -S
start_server() { # -> 0 up, 1 failed, 3 port taken
  local pid pgid i
  port_free "$PORT" || return 3
  log "starting php -S 127.0.0.1:$PORT (PHP_CLI_SERVER_WORKERS=$WORKERS)"
  # setsid: own session + process group (pgid = pid), so stop.sh can signal the master and its
  # forked workers at once. fds 3 (our stdout) and 9 (the lock) must not leak into the server.
  setsid env PHP_CLI_SERVER_WORKERS="$WORKERS" \
    php -S "127.0.0.1:$PORT" -t "$DATA/docroot" "$DATA/router.php" \
    >> "$DATA/logs/php-server.log" 2>&1 < /dev/null 3>&- 9>&- &
  pid=$!
  echo "$pid" > "$PIDF"
  for i in $(seq 1 300); do
    if ! kill -0 "$pid" 2> /dev/null; then
      wait "$pid" 2> /dev/null || true
      rm -f "$PIDF"
      if tail -n 5 "$DATA/logs/php-server.log" | grep -qiE 'in use|failed to listen'; then return 3; fi
      tail -n 20 "$DATA/logs/php-server.log" >&2
      return 1
    fi
    if is_us && kill -0 "$pid" 2> /dev/null; then
      pgid=$(ps -o pgid= -p "$pid" | tr -d ' ')
      [ "$pgid" = "$pid" ] || log "warning: php -S pid $pid has pgid $pgid (stop.sh signals the pid only)"
      return 0
    fi
    sleep 0.1
  done
  log "php -S did not answer within 30 s"
  tail -n 20 "$DATA/logs/php-server.log" >&2
  return 1
}

echo "$PORT" > "$DATA/port"
if [ "$START" = 1 ]; then
  if [ -n "$RUNNING_PID" ] && { [ "$RESTART" = 1 ] || [ "$RUNNING_PORT" != "$PORT" ]; }; then
    bash "$SELF_DIR/stop.sh" "$DATA" >&2
    RUNNING_PID=
  fi
  if [ -n "$RUNNING_PID" ] && ! is_us; then
    log "php -S (pid $RUNNING_PID) does not answer; restarting it"
    bash "$SELF_DIR/stop.sh" "$DATA" >&2
    RUNNING_PID=
  fi
  if [ -n "$RUNNING_PID" ]; then
    log "php -S already running (pid $RUNNING_PID) on port $PORT"
  else
    tries=0
    while :; do
      rc=0
      start_server || rc=$?
      [ "$rc" = 0 ] && break
      tries=$((tries + 1))
      if [ "$rc" = 3 ] && [ "$AUTO_PORT" = 1 ] && [ "$tries" -lt 5 ]; then
        PORT=$(free_port)
        SERVER=http://127.0.0.1:$PORT
        log "port taken meanwhile; trying $PORT"
        bash "$SELF_DIR/toggle.sh" "$DATA" "server=$SERVER"
        echo "$PORT" > "$DATA/port"
        continue
      fi
      [ "$rc" = 3 ] && log "port $PORT is in use"
      exit 1
    done
  fi
  # Warm up (l10n cache, OPcache) so the first test request is not the slow one.
  gen=$(probe '/w/api.php?action=query&meta=siteinfo&siprop=general&format=json' |
    php -r '$j = json_decode(stream_get_contents(STDIN), true); echo $j["query"]["general"]["generator"] ?? "";') || true
  case "$gen" in
    MediaWiki*) ;;
    *)
      log "siteinfo did not answer with a MediaWiki generator (got: '$gen'); see $DATA/logs/"
      exit 1
      ;;
  esac
  probe '/w/api.php?action=wbavailablebadges&format=json' > /dev/null
  probe '/w/api.php?action=query&list=filearchive&format=json' > /dev/null
  [ -z "$WIKIBASE" ] || probe '/w/api.php?action=wbgetentities&ids=Q1&format=json' > /dev/null
  log "up: $gen at $SERVER/w/api.php (pid $(cat "$PIDF")), setup took $(elapsed "$T_START") s"
else
  log "configured (not started), setup took $(elapsed "$T_START") s"
fi

echo "WIKI_URL=$SERVER" >&3
echo "WIKI_DATA=$DATA" >&3
