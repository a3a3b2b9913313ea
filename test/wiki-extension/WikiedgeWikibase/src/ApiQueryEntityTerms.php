<?php
/**
 * prop=entityterms, like Wikibase's repo/includes/Api/EntityTerms.php: for each entity page
 * the terms in the user language (or wbetlanguage) with fallback; cache mode public.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiQuery;
use ApiQueryBase;
use Title;
use Wikimedia\ParamValidator\ParamValidator;

class ApiQueryEntityTerms extends ApiQueryBase {

	public function __construct( ApiQuery $query, string $moduleName ) {
		parent::__construct( $query, $moduleName, 'wbet' );
	}

	public function getCacheMode( $params ) {
		return 'public';
	}

	public function execute() {
		$p = $this->extractRequestParams();
		$lang = $p['language'] ?? $this->getLanguage()->getCode();
		$want = array_flip( $p['terms'] );
		foreach ( $this->getPageSet()->getGoodPages() as $pageId => $page ) {
			$id = EntityStore::idFromTitle( Title::castFromPageIdentity( $page ) );
			$r = $id ? EntityStore::load( $id ) : null;
			if ( !$r || !$r['entity'] ) {
				continue;
			}
			$e = $r['entity'];
			$terms = [];
			if ( isset( $want['alias'] ) ) {
				foreach ( EntityStore::fallbackChain( $lang ) as $code ) {
					if ( !empty( $e['aliases'][$code] ) ) {
						$terms['alias'] = array_column( $e['aliases'][$code], 'value' );
						break;
					}
				}
			}
			foreach ( [ 'label' => 'labels', 'description' => 'descriptions' ] as $k => $f ) {
				$t = isset( $want[$k] ) ? EntityStore::term( $e, $f, $lang ) : null;
				if ( $t ) {
					$terms[$k] = [ $t[0] ];
				}
			}
			$this->getResult()->addValue( [ 'query', 'pages', $pageId ], 'entityterms', $terms );
		}
	}

	public function getAllowedParams() {
		return [
			'continue' => [ ParamValidator::PARAM_TYPE => 'integer' ],
			'language' => [ ParamValidator::PARAM_TYPE => 'string' ],
			'terms' => [ ParamValidator::PARAM_TYPE => [ 'alias', 'label', 'description' ],
				ParamValidator::PARAM_DEFAULT => 'alias|label|description', ParamValidator::PARAM_ISMULTI => true ],
		];
	}
}
