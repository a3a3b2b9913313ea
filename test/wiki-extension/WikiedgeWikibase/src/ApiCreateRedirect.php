<?php
/**
 * action=wbcreateredirect, like Wikibase's repo/includes/Api/CreateRedirect.php (result
 * success + redirect) and Interactors/EntityRedirectCreationInteractor.php (the source must be
 * empty or a redirect already; summary "/* wbcreateredirect:0||Q6|Q1 *\/").
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use Wikimedia\ParamValidator\ParamValidator;

class ApiCreateRedirect extends ApiWbWrite {

	public function execute() {
		$p = $this->extractRequestParams();
		$fromId = EntityStore::parseId( $p['from'] );
		$toId = EntityStore::parseId( $p['to'] );
		if ( $fromId === null || $toId === null ) {
			$this->dieWb( 'invalid-entity-id', 'wikibase-api-invalid-entity-id' );
		}
		$from = EntityStore::load( $fromId, true );
		if ( !$from ) {
			$this->dieWb( 'no-such-entity', 'wikibase-api-no-such-entity', [ $fromId ], [ 'id' => $fromId ] );
		}
		$to = EntityStore::load( $toId, true );
		if ( !$to ) {
			$this->dieWb( 'no-such-entity', 'wikibase-api-no-such-entity', [ $toId ], [ 'id' => $toId ] );
		}
		if ( $to['entity'] === null ) {
			$this->dieWb( 'target-is-redirect', 'wikibase-redirect-target-is-redirect' );
		}
		if ( $fromId[0] !== $toId[0] ) {
			$this->dieWb( 'target-is-incompatible', 'wikibase-redirect-target-is-incompatible' );
		}
		$e = $from['entity'];
		if ( $e !== null && ( !empty( $e['labels'] ) || !empty( $e['descriptions'] ) || !empty( $e['aliases'] )
			|| !empty( $e['claims'] ) || !empty( $e['sitelinks'] ) )
		) {
			$this->dieWb( 'origin-not-empty', 'wikibase-redirect-origin-not-empty' );
		}
		$this->saveEntity( $fromId, [ 'entity' => $fromId, 'redirect' => $toId ],
			EntityStore::summary( 'wbcreateredirect', 0, '', [ $fromId, $toId ] ) );
		$this->getResult()->addValue( null, 'success', 1 );
		$this->getResult()->addValue( null, 'redirect', $toId );
	}

	public function getAllowedParams() {
		return [
			'from' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'to' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'bot' => [ ParamValidator::PARAM_TYPE => 'boolean', ParamValidator::PARAM_DEFAULT => false ],
		];
	}
}
