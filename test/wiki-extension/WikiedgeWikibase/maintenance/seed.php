<?php
/**
 * Seed the WikiedgeWikibase stand-in with maintenance/entities.json (each step one revision,
 * saved as the given user through EntityStore::save, i.e. WikiPage::doUserEditContent()).
 * Steps whose page already exists with the same content are skipped, so it can run again.
 *
 * Usage: MW_INSTALL_PATH=/usr/share/mediawiki php seed.php --conf LocalSettings.php --user Admin
 *
 * @license GPL-2.0-or-later
 */

use MediaWiki\Extension\WikiedgeWikibase\EntityStore;

require_once ( getenv( 'MW_INSTALL_PATH' ) ?: '/usr/share/mediawiki' ) . '/maintenance/Maintenance.php';

class WikiedgeWikibaseSeed extends Maintenance {
	public function __construct() {
		parent::__construct();
		$this->addOption( 'user', 'User to save as', true, true );
	}

	public function execute() {
		$user = User::newFromName( $this->getOption( 'user' ) );
		if ( !$user || !$user->isRegistered() ) {
			$this->fatalError( 'no such user' );
		}
		$seed = json_decode( file_get_contents( __DIR__ . '/entities.json' ), true );
		$done = 0;
		foreach ( $seed['steps'] as $step ) {
			$e = $step['entity'];
			$cur = EntityStore::load( $e['id'], true );
			if ( $step['new'] ?? false ) {
				if ( $cur ) {
					continue;
				}
			} elseif ( $cur && $cur['entity'] !== null && EntityStore::encode( $cur['entity'] ) === EntityStore::encode( $e ) ) {
				continue;
			}
			// [[Item:Q2]] -> the item page's prefixed title in this layout
			$summary = preg_replace_callback( '/\[\[(?:Item|Property):([QP]\d+)\]\]/', static function ( $m ) {
				return '[[' . EntityStore::title( $m[1] )->getPrefixedText() . ']]';
			}, $step['summary'] );
			$r = EntityStore::save( $e['id'], $e, $summary, $user, ( $step['new'] ?? false ) ? EDIT_NEW : EDIT_UPDATE );
			if ( !$r['status']->isOK() ) {
				$this->fatalError( "saving {$e['id']} failed: " . $r['status']->getWikiText( false, false, 'en' ) );
			}
			$done++;
		}
		$this->output( "seeded $done revisions\n" );
	}
}

$maintClass = WikiedgeWikibaseSeed::class;
require_once RUN_MAINTENANCE_IF_MAIN;
