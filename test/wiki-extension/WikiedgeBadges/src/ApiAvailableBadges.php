<?php
/**
 * action=wbavailablebadges for the wikiedge integration tests.
 *
 * Behaves like Wikibase's repo/includes/Api/AvailableBadges.php (module name, the two cache
 * calls, result shape); the badge list comes from $wgWikiedgeBadgesBadgeItems instead of the
 * Wikibase repo setting 'badgeItems'. See ../README.md.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeBadges;

use ApiBase;
use ApiMain;
use ApiResult;
use Config;

class ApiAvailableBadges extends ApiBase {

	/** @var Config */
	private $config;

	public function __construct( ApiMain $mainModule, string $moduleName, Config $config ) {
		parent::__construct( $mainModule, $moduleName );
		$this->config = $config;
	}

	public function execute() {
		// Wikibase: public, cacheable for an hour. (ApiMain downgrades 'public' to
		// 'anon-public-user-private' unless the request has an explicit uselang != user.)
		$this->getMain()->setCacheMode( 'public' );
		$this->getMain()->setCacheMaxAge( 3600 );

		// Wikibase: $this->repoSettings->getSetting( 'badgeItems' ), a map item id => class.
		$badgeItems = $this->config->get( 'WikiedgeBadgesBadgeItems' );
		$idStrings = array_keys( $badgeItems );
		ApiResult::setIndexedTagName( $idStrings, 'badge' );
		$this->getResult()->addValue( null, 'badges', $idStrings );
	}

	protected function getExamplesMessages() {
		return [
			'action=wbavailablebadges' => 'apihelp-wbavailablebadges-example-1',
		];
	}
}
