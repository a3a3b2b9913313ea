<?php
# LocalSettings.php for the compose demo: the official `mediawiki:1.39` image (Apache,
# MediaWiki in /var/www/html) on SQLite, behind the wikiedge gateway.
#
# compose.yaml mounts this file read-only at /var/www/html/LocalSettings.php. The database
# must be created once with install.php before the wiki works: see the first-run command in
# compose.yaml. That command writes install.php's own LocalSettings.php to /tmp of a
# throw-away container; this file is the one that is used.
#
# Environment (set in compose.yaml):
#   MW_SECRET_KEY   required: 64 hex chars, e.g. `openssl rand -hex 32`
#   MW_SERVER       public base URL of the wiki (default http://localhost:8080, the gateway)
#   WIKIEDGE_NET    CIDR of the compose network the gateway is on (default 172.30.0.0/24)

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
## The gateway accepts PURGE only from the addresses in its WIKIEDGE_TRUSTED_PROXIES (IP
## list), which is why compose.yaml gives this container a fixed address.
## NOTE: an "IP:port" or hostname entry here is NOT trusted for X-Forwarded-For: the trust
## test is in_array( $ip, $wgCdnServers ) on the bare IP. Trust comes from the next setting.
$wgCdnServers = [ 'wikiedge:8080' ];

## $wgCdnServersNoPurge: trusted proxies, never purged. Accepts IPs and CIDR ranges. With
## the gateway's network here, MediaWiki takes the client address from the X-Forwarded-For
## header the gateway adds (rate limits, blocks, CheckUser, IP edits see the real client).
## Only list networks where every host is a proxy you control: anything on it can claim
## any client IP.
$wgCdnServersNoPurge = [ getenv( 'WIKIEDGE_NET' ) ?: '172.30.0.0/24' ];

## $wgUseCdn stays OFF here, on purpose. Setting it to true:
##  * makes anonymous page views (index.php) cacheable: `s-maxage=$wgCdnMaxAge` instead of
##    `private` (api.php responses are unchanged: the API sets its own Cache-Control);
##  * turns the debug toolbar OFF (MWDebug::setup() skips it when $wgUseCdn is set), so
##    API results carry no "debuginfo" and the gateway has no wiki-side figures (SQL query
##    count/time, memory, request time) to export as metrics;
##  * does not change PURGE: that depends only on $wgCdnServers.
$wgUseCdn = false;

## The debug toolbar adds a "debuginfo" object to every successful API result: the wiki's
## own timing, memory and SQL queries. The gateway reads it, exports it as Prometheus
## metrics, and strips it before caching and answering (WIKIEDGE_DEBUGINFO=strip, the
## default), because it is big (~90 KB) and echoes the request's Cookie header. It costs
## the wiki real time (~6x per API request): turn it off if you do not need the metrics.
$wgDebugToolbar = true;
$wgShowExceptionDetails = false;
