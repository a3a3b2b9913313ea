#!/usr/bin/env bash
# Flip the runtime toggles of a wiki made by scripts/wiki/setup.sh, without a restart.
#
# Usage:
#   scripts/wiki/toggle.sh DATA_DIR key=value [key=value...]
#   scripts/wiki/toggle.sh DATA_DIR --show          # print lab.json
#
# The toggles live in DATA_DIR/lab.json, which DATA_DIR/WikiedgeSettings.php reads with
# file_get_contents() on every request (a *.php config would be served stale by OPcache for up
# to opcache.revalidate_freq=2 s). The file is rewritten atomically (temp file + rename), so a
# request sees either the old or the new toggles. Keys not given keep their current value.
#
# Keys:
#   debug=true|false        $wgDebugToolbar: the "debuginfo" key in API results
#   debugLog=true|false     $wgDebugLogFile = DATA_DIR/logs/debug.log (wfDebug output)
#   badges=Q1,Q2            $wgWikiedgeBadgesBadgeItems (keys = what action=wbavailablebadges
#                           returns, in this order); "badges=" empties it
#   cdn=HOST:PORT[,...]     $wgCdnServers: MediaWiki sends PURGE through these (as HTTP proxies)
#   trustProxy=IP[,...]     $wgCdnServersNoPurge: trusted for X-Forwarded-For, never purged
#   useCdn=true|false       $wgUseCdn (default false; note true disables debuginfo)
#   server=URL              $wgServer (setup.sh sets http://127.0.0.1:PORT)
# Booleans accept true/false, 1/0, yes/no, on/off.
#
# The same file is written by setup.sh (its --debug/--badges/--cdn/--trust-proxy options) and by
# setWikiToggle() in test/support/wiki.ts.
set -euo pipefail

if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,25p' "$0" >&2
  [ $# -lt 1 ] && exit 2
  exit 0
fi
DATA=$1
shift
if [ ! -d "$DATA" ]; then
  echo "[toggle] no such directory: $DATA" >&2
  exit 2
fi
if [ "${1:-}" = --show ]; then
  cat "$DATA/lab.json"
  exit 0
fi

php -d display_errors=stderr -r '
$file = $argv[1] . "/lab.json";
$defaults = [ "server" => "", "debug" => false, "debugLog" => false, "badges" => [],
  "cdn" => [], "trustProxy" => [], "useCdn" => false ];
$cur = is_file( $file ) ? json_decode( (string)file_get_contents( $file ), true ) : [];
if ( !is_array( $cur ) ) {
  fwrite( STDERR, "[toggle] $file is not a JSON object, starting from defaults\n" );
  $cur = [];
}
$conf = array_merge( $defaults, $cur );
$bool = static function ( string $k, string $v ): bool {
  $b = filter_var( $v, FILTER_VALIDATE_BOOLEAN, FILTER_NULL_ON_FAILURE );
  if ( $b === null ) {
    fwrite( STDERR, "[toggle] $k: not a boolean: \"$v\"\n" );
    exit( 2 );
  }
  return $b;
};
$list = static fn ( string $v ): array => array_values( array_filter( array_map( "trim", explode( ",", $v ) ), "strlen" ) );
foreach ( array_slice( $argv, 2 ) as $arg ) {
  $eq = strpos( $arg, "=" );
  if ( $eq === false ) {
    fwrite( STDERR, "[toggle] expected key=value, got \"$arg\"\n" );
    exit( 2 );
  }
  $k = substr( $arg, 0, $eq );
  $v = substr( $arg, $eq + 1 );
  switch ( $k ) {
    case "debug": case "debugLog": case "useCdn":
      $conf[$k] = $bool( $k, $v ); break;
    case "badges": case "cdn": case "trustProxy":
      $conf[$k] = $list( $v ); break;
    case "server":
      $conf[$k] = $v; break;
    default:
      fwrite( STDERR, "[toggle] unknown key \"$k\" (debug, debugLog, badges, cdn, trustProxy, useCdn, server)\n" );
      exit( 2 );
  }
}
$tmp = $file . ".tmp." . getmypid();
$json = json_encode( $conf, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT ) . "\n";
if ( file_put_contents( $tmp, $json ) === false || !rename( $tmp, $file ) ) {
  @unlink( $tmp );
  fwrite( STDERR, "[toggle] cannot write $file\n" );
  exit( 1 );
}
' "$DATA" "$@"
