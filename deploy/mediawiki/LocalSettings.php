<?php
# LocalSettings.php for the compose demo: the official `mediawiki:1.39` image (Apache,
# MediaWiki in /var/www/html) on SQLite, behind the wikiedge gateway.
#
# compose.yaml mounts this file read-only at /var/www/html/LocalSettings.php. On the first
# start, deploy/mediawiki/start.sh creates the database with install.php (which writes a
# LocalSettings.php of its own to a temporary folder, deleted afterwards); this file is the one
# that is used.
#
# Environment (set in compose.yaml):
#   MW_SECRET_KEY           required: 64 hex chars, e.g. `openssl rand -hex 32`
#   MW_SERVER               public base URL of the wiki (default http://localhost:8080, the gateway)
#   MW_TRUSTED_PROXY_CIDR   the addresses the gateway can have on the wiki network (compose.yaml:
#                           its ip_range, 172.30.0.128/25): trusted for X-Forwarded-For

if ( !defined( 'MEDIAWIKI' ) ) {
	exit;
}

$wgSitename = 'Wikiedge Demo';
$wgMetaNamespace = 'Project';
$wgLanguageCode = 'en';

## URLs. The official image serves MediaWiki at the document root; compose.yaml adds an
## Apache `Alias /w /var/www/html`, so /w/api.php works as on most wikis and as the gateway
## expects (WIKIEDGE_API_PATH defaults to /w/api.php).
$wgServer = getenv( 'MW_SERVER' ) ?: 'http://localhost:8080';
$wgScriptPath = '/w';
$wgResourceBasePath = $wgScriptPath;
$wgArticlePath = "$wgScriptPath/index.php/$1";

## Database: SQLite in the named volume mounted at /var/www/data.
$wgDBtype = 'sqlite';
$wgDBserver = '';
$wgDBname = 'wikiedge';
$wgDBuser = '';
$wgDBpassword = '';
$wgSQLiteDataDir = '/var/www/data';

## Cookies: wiki_session, wikiUserID, wikiUserName, wikiToken. Without this MediaWiki
## derives the prefix from $wgDBname ("wikiedge_session"). It must match the gateway's
## WIKIEDGE_COOKIE_PREFIX (default "wiki"), or the gateway cannot tell logged-in
## requests from anonymous ones.
$wgCookiePrefix = 'wiki';

## Cache (and sessions, which default to it): APCu, which the official image has. It is
## per container, which is fine for one Apache container.
$wgMainCacheType = function_exists( 'apcu_fetch' ) ? CACHE_ACCEL : CACHE_DB;

$wgSecretKey = getenv( 'MW_SECRET_KEY' ) ?: '';
if ( strlen( $wgSecretKey ) < 32 ) {
	# Refuse to run with a guessable key (it signs sessions and CSRF tokens).
	throw new RuntimeException( 'MW_SECRET_KEY is not set (or shorter than 32 characters)' );
}
$wgAuthenticationTokenVersion = '1';

$wgEnableEmail = false;
$wgEnableUserEmail = false;
$wgEnableUploads = false;
$wgUseImageMagick = false;
$wgUseInstantCommons = false;
$wgPingback = false;
$wgDiff3 = '';

wfLoadSkin( 'Vector' );
$wgDefaultSkin = 'vector';

## ---------------------------------------------------------------------------------------
## Behind the wikiedge gateway
## ---------------------------------------------------------------------------------------

## $wgCdnServers: where MediaWiki sends PURGE. On every edit, create and delete it sends
## one `PURGE http://<$wgInternalServer>/w/index.php/<Title>` per URL per entry, using the
## entry as an HTTP proxy. It does so whenever this list is non-empty, even with
## $wgUseCdn = false. (MediaWiki purges index.php URLs only, never api.php.)
## The gateway, by its compose service name: its PURGEs reach the gateway from the wiki's
## address on the wiki network, which the gateway accepts because compose.yaml sets its
## WIKIEDGE_PURGE_ALLOW to that network's ip_range. Nothing else may PURGE through the public
## port (the default allows loopback only).
## NOTE: an "IP:port" or hostname entry here is NOT trusted for X-Forwarded-For: the trust
## test is in_array( $ip, $wgCdnServers ) on the bare IP. Trust comes from the next setting.
$wgCdnServers = [ 'wikiedge:8080' ];

## $wgCdnServersNoPurge: trusted proxies, never purged. Accepts IPs and CIDR ranges. Here the
## range the gateway's address on the wiki network is drawn from (compose.yaml gives that
## network a fixed subnet, 172.30.0.0/24, and hands containers addresses from its ip_range
## 172.30.0.128/25 only), so MediaWiki takes the client address from the X-Forwarded-For
## header the gateway adds (rate limits, blocks, CheckUser, IP edits see the real client).
## The range leaves out the network's gateway address (172.30.0.1), which is what connections
## from the host through published ports come from. Only list ranges where every host is a
## proxy you control: anything in it can claim any client IP. Change it together with the
## network's ipam in compose.yaml.
$wgCdnServersNoPurge = [ getenv( 'MW_TRUSTED_PROXY_CIDR' ) ?: '172.30.0.128/25' ];

## $wgUseCdn stays OFF here, on purpose. Setting it to true:
##  * makes anonymous page views (index.php) cacheable: `s-maxage=$wgCdnMaxAge` instead of
##    `private` (api.php responses are unchanged: the API sets its own Cache-Control);
##  * turns the debug toolbar off (MWDebug::setup() skips it when $wgUseCdn is set);
##  * does not change PURGE: that depends only on $wgCdnServers.
$wgUseCdn = false;

## =======================================================================================
## $wgDebugToolbar MUST STAY OFF IN PRODUCTION (and in anything reachable by others).
## With it on, MediaWiki embeds the debug toolbar's data in EVERY HTML page it renders
## (index.php page views, special pages, edit forms), and a "debuginfo" block in every API
## result: the request's Cookie header (session cookies included), all SQL queries, ~930 file
## paths, PHP's memory and timings. The gateway removes debuginfo from /w/api.php answers
## only; everything else (index.php, load.php, rest.php) is streamed through it untouched,
## so every page view through the gateway would hand the viewer's cookies and the wiki's SQL
## to whoever sees the page (and to any cache or log in between). It also costs the wiki ~6x
## the time per API request.
## Turn it on only on a private test wiki, to see the gateway's wiki-side metrics
## (wikiedge_wiki_* from debuginfo); the gateway's own metrics do not need it.
## =======================================================================================
$wgDebugToolbar = false;
$wgShowExceptionDetails = false;
