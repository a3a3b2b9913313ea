<?php
/**
 * Print what a MediaWiki itself says identifies a user, for the gateway's configuration: the vary
 * cookies of every session provider (SessionManager::getVaryCookies(), extensions' providers
 * included), their vary headers, and OutputPage::getCacheVaryCookies() ($wgCacheVaryCookies on
 * top). Run it on the wiki's host, as the wiki's user; it needs no database:
 *
 *   php scripts/wiki/vary-cookies.php [--conf /path/to/LocalSettings.php]
 *   MW_INSTALL_PATH=/var/www/mediawiki php scripts/wiki/vary-cookies.php
 *
 * It prints JSON, then (on stderr) the settings to give the gateway: WIKIEDGE_COOKIE_PREFIX,
 * WIKIEDGE_SESSION_NAME, and WIKIEDGE_CREDENTIAL_COOKIES for every vary cookie the gateway does
 * not know by itself (those of CookieSessionProvider and BotPasswordSessionProvider), and
 * WIKIEDGE_CREDENTIAL_HEADERS for the vary headers besides Authorization.
 */
$IP = getenv( 'MW_INSTALL_PATH' ) ?: '/usr/share/mediawiki';
require_once "$IP/maintenance/Maintenance.php";

class WikiedgeVaryCookies extends Maintenance {
	public function execute() {
		$sm = MediaWiki\Session\SessionManager::singleton();
		$config = $this->getConfig();
		$prefix = (string)$config->get( 'CookiePrefix' );
		$sessionName = (string)( $config->get( 'SessionName' ) ?: '' );
		$session = $sessionName !== '' ? $sessionName : $prefix . '_session';
		$known = [ $session, "{$prefix}Token", "{$prefix}LoggedOut", 'forceHTTPS', "{$prefix}_BPsession", 'sessionJwt' ];
		$cookies = array_values( array_unique( array_merge(
			$sm->getVaryCookies(),
			RequestContext::getMain()->getOutput()->getCacheVaryCookies()
		) ) );
		$headers = array_map( 'strtolower', array_keys( $sm->getVaryHeaders() ) );
		$providers = [];
		foreach ( $config->get( 'SessionProviders' ) as $spec ) {
			$providers[] = $spec['class'] ?? '(factory)';
		}
		$this->output( json_encode( [
			'cookiePrefix' => $prefix,
			'sessionName' => $sessionName,
			'providers' => $providers,
			'varyCookies' => $cookies,
			'varyHeaders' => $headers,
		], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES ) . "\n" );
		$extraCookies = array_values( array_diff( $cookies, $known ) );
		$extraHeaders = array_values( array_diff( $headers, [ 'authorization' ] ) );
		fwrite( STDERR, "WIKIEDGE_COOKIE_PREFIX=$prefix\n" );
		if ( $sessionName !== '' ) {
			fwrite( STDERR, "WIKIEDGE_SESSION_NAME=$sessionName\n" );
		}
		if ( $extraCookies ) {
			fwrite( STDERR, 'WIKIEDGE_CREDENTIAL_COOKIES=' . implode( ',', $extraCookies ) . "\n" );
		}
		if ( $extraHeaders ) {
			fwrite( STDERR, 'WIKIEDGE_CREDENTIAL_HEADERS=' . implode( ',', $extraHeaders ) . "\n" );
		}
	}
}

$maintClass = WikiedgeVaryCookies::class;
require_once RUN_MAINTENANCE_IF_MAIN;
