<?php
/**
 * Errors in Wikibase's shape (repo/includes/Api/ApiErrorReporter.php dieError/dieException):
 * the API code, then extra data, then "messages": [ { name, parameters, html: { "*": ... } } ].
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiMessage;

trait WbErrors {

	/**
	 * @return never
	 */
	protected function dieWb( string $code, string $msgKey, array $params = [], array $extra = [] ) {
		$msg = wfMessage( $msgKey, $params )->inLanguage( $this->getLanguage() );
		$data = $extra + [
			'messages' => [ [ 'name' => $msgKey, 'parameters' => $params, 'html' => [ '*' => $msg->parse() ] ] ],
		];
		$this->dieWithError( ApiMessage::create( wfMessage( $msgKey, $params ), $code, $data ) );
	}

	/** An entity id from a request value, or die with no-such-entity like Wikibase does. */
	protected function entityIdOrDie( string $raw ): string {
		$id = EntityStore::parseId( $raw );
		if ( $id === null ) {
			$this->dieWb( 'no-such-entity', 'wikibase-api-no-such-entity', [ $raw ], [ 'id' => $raw ] );
		}
		return $id;
	}
}
