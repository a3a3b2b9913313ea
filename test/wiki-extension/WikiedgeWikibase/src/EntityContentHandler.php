<?php
/**
 * Content handler of the content models wikibase-item and wikibase-property: JSON, stored as
 * given (no beautifying pre-save transform: Wikibase stores compact JSON).
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use Content;
use ContentHandler;
use JsonContentHandler;
use MediaWiki\Content\Renderer\ContentParseParams;
use MediaWiki\Content\Transform\PreSaveTransformParams;
use ParserOutput;

class EntityContentHandler extends JsonContentHandler {

	public function __construct( $modelId = 'wikibase-item' ) {
		parent::__construct( $modelId );
	}

	protected function getContentClass() {
		return EntityContent::class;
	}

	public function unserializeContent( $text, $format = null ) {
		$this->checkFormat( $format );
		return new EntityContent( $text, $this->getModelID() );
	}

	public function makeEmptyContent() {
		return new EntityContent( '{}', $this->getModelID() );
	}

	public function supportsRedirects() {
		return true;
	}

	public function makeRedirectContent( \Title $destination, $text = '' ) {
		$id = EntityStore::idFromTitle( $destination );
		return new EntityContent( json_encode( [ 'entity' => '', 'redirect' => $id ] ), $this->getModelID() );
	}

	public function preSaveTransform( Content $content, PreSaveTransformParams $pstParams ): Content {
		return $content;
	}

	protected function fillParserOutput(
		Content $content,
		ContentParseParams $cpoParams,
		ParserOutput &$parserOutput
	) {
		parent::fillParserOutput( $content, $cpoParams, $parserOutput );
		'@phan-var EntityContent $content';
		$data = $content->getArray();
		if ( $data === null || isset( $data['redirect'] ) ) {
			return;
		}
		// Wikibase's EntityParserOutputGenerator page props (capture of prop=pageprops)
		$claims = 0;
		foreach ( $data['claims'] ?? [] as $list ) {
			$claims += count( $list );
		}
		$parserOutput->setPageProperty( 'wb-claims', (string)$claims );
		if ( ( $data['type'] ?? '' ) === 'item' ) {
			$parserOutput->setPageProperty( 'wb-identifiers', '0' );
			$parserOutput->setPageProperty( 'wb-sitelinks', (string)count( $data['sitelinks'] ?? [] ) );
		}
	}
}
