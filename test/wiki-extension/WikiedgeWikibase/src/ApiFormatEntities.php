<?php
/**
 * action=wbformatentities, like Wikibase's repo/includes/Api/FormatEntities.php: cache mode
 * public, {"wbformatentities":{"Q1":"<a title=... href=full URL>label</a>"},"success":1}.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiBase;
use ApiResult;
use Html;
use Wikimedia\ParamValidator\ParamValidator;

class ApiFormatEntities extends ApiBase {
	use WbErrors;

	public function execute() {
		$this->getMain()->setCacheMode( 'public' );
		$p = $this->extractRequestParams();
		$out = [];
		foreach ( $p['ids'] as $raw ) {
			$id = $this->entityIdOrDie( $raw );
			$title = EntityStore::title( $id );
			$label = EntityStore::label( $id, $this->getLanguage()->getCode() );
			$out[$id] = Html::element( 'a', [ 'title' => $title->getPrefixedText(), 'href' => $title->getFullURL() ],
				$label ?? $id );
		}
		$out[ApiResult::META_TYPE] = 'assoc';
		$this->getResult()->addValue( null, 'wbformatentities', $out );
		$this->getResult()->addValue( null, 'success', 1 );
	}

	public function getAllowedParams() {
		return [
			'ids' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_ISMULTI => true,
				ParamValidator::PARAM_REQUIRED => true ],
		];
	}
}
