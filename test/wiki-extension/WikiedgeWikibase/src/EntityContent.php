<?php
/**
 * Content of an entity page: the entity's JSON, as Wikibase stores it (capture of
 * prop=revisions: contentformat application/json, model wikibase-item / wikibase-property).
 * A redirect is stored as {"entity":"Q6","redirect":"Q1"} and is a real MediaWiki redirect
 * (Wikibase's repo/includes/Content/EntityContent.php getRedirectTarget()), so the page-save
 * path writes the redirect table and recentchanges' redirect flag itself.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use JsonContent;
use Title;

class EntityContent extends JsonContent {

	public function __construct( $text, $modelId = 'wikibase-item' ) {
		parent::__construct( $text, $modelId );
	}

	/** @return array|null the decoded JSON object */
	public function getArray(): ?array {
		$data = json_decode( $this->getText(), true );
		return is_array( $data ) ? $data : null;
	}

	public function getRedirectTarget() {
		$data = $this->getArray();
		if ( isset( $data['redirect'] ) && is_string( $data['redirect'] ) ) {
			$id = EntityStore::parseId( $data['redirect'] );
			return $id === null ? null : EntityStore::title( $id );
		}
		return null;
	}

	public function getTextForSummary( $maxlength = 250 ) {
		return '';
	}
}
