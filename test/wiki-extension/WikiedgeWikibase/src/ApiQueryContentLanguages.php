<?php
/**
 * meta=wbcontentlanguages, like Wikibase's repo/includes/Api/MetaContentLanguages.php: the
 * term languages (every language MediaWiki knows) keyed by code; cache mode public.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiQuery;
use ApiQueryBase;
use ApiResult;
use MediaWiki\Languages\LanguageNameUtils;
use MediaWiki\MediaWikiServices;
use Wikimedia\ParamValidator\ParamValidator;

class ApiQueryContentLanguages extends ApiQueryBase {

	public function __construct( ApiQuery $query, string $moduleName ) {
		parent::__construct( $query, $moduleName, 'wbcl' );
	}

	public function getCacheMode( $params ) {
		return 'public';
	}

	public function execute() {
		$p = $this->extractRequestParams();
		$props = array_flip( $p['prop'] );
		$names = MediaWikiServices::getInstance()->getLanguageNameUtils();
		$autonyms = $names->getLanguageNames( LanguageNameUtils::AUTONYMS, LanguageNameUtils::ALL );
		$localized = isset( $props['name'] )
			? $names->getLanguageNames( $this->getLanguage()->getCode(), LanguageNameUtils::ALL ) : [];
		ksort( $autonyms );
		$out = [];
		foreach ( $autonyms as $code => $autonym ) {
			$entry = [];
			if ( isset( $props['code'] ) ) {
				$entry['code'] = $code;
			}
			if ( isset( $props['autonym'] ) ) {
				$entry['autonym'] = $autonym;
			}
			if ( isset( $props['name'] ) ) {
				$entry['name'] = $localized[$code] ?? $autonym;
			}
			$entry[ApiResult::META_TYPE] = 'assoc';
			$out[$code] = $entry;
		}
		$out[ApiResult::META_TYPE] = 'assoc';
		$this->getResult()->addValue( [ 'query' ], $this->getModuleName(), $out );
	}

	public function getAllowedParams() {
		return [
			'context' => [ ParamValidator::PARAM_TYPE => [ 'term', 'monolingualtext' ], ParamValidator::PARAM_DEFAULT => 'term' ],
			'prop' => [ ParamValidator::PARAM_TYPE => [ 'code', 'autonym', 'name' ], ParamValidator::PARAM_DEFAULT => 'code',
				ParamValidator::PARAM_ISMULTI => true ],
		];
	}
}
