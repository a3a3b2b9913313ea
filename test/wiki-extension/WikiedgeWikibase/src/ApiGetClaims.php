<?php
/**
 * action=wbgetclaims, like Wikibase's repo/includes/Api/GetClaims.php: cache mode public,
 * {"claims":{"P2":[statement...]}} filtered by property / rank / claim GUID.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiBase;
use ApiResult;
use Wikimedia\ParamValidator\ParamValidator;

class ApiGetClaims extends ApiBase {
	use WbErrors;

	public function execute() {
		$this->getMain()->setCacheMode( 'public' );
		$p = $this->extractRequestParams();
		$guid = $p['claim'];
		if ( $p['entity'] === null && $guid === null ) {
			$this->dieWb( 'param-missing', 'wikibase-api-param-missing', [ 'entity' ] );
		}
		if ( $guid !== null ) {
			$prefix = strstr( $guid, '$', true );
			$id = $prefix === false ? null : EntityStore::parseId( $prefix );
			if ( $id === null ) {
				$this->dieWb( 'invalid-guid', 'wikibase-api-invalid-guid', [ $guid ] );
			}
		} else {
			$id = $this->entityIdOrDie( $p['entity'] );
		}
		$r = EntityStore::loadResolved( $id );
		if ( !$r || !$r['entity'] ) {
			$this->dieWb( 'no-such-entity', 'wikibase-api-no-such-entity', [ $id ], [ 'id' => $id ] );
		}
		$claims = [];
		foreach ( $r['entity']['claims'] ?? [] as $pid => $list ) {
			if ( $p['property'] !== null && $pid !== strtoupper( $p['property'] ) ) {
				continue;
			}
			foreach ( $list as $st ) {
				if ( ( $guid !== null && $st['id'] !== $guid ) || ( $p['rank'] !== null && $st['rank'] !== $p['rank'] ) ) {
					continue;
				}
				$claims[$pid][] = $st;
			}
		}
		$claims[ApiResult::META_TYPE] = 'assoc';
		$this->getResult()->addValue( null, 'claims', $claims );
	}

	public function getAllowedParams() {
		return [
			'entity' => [ ParamValidator::PARAM_TYPE => 'string' ],
			'property' => [ ParamValidator::PARAM_TYPE => 'string' ],
			'claim' => [ ParamValidator::PARAM_TYPE => 'string' ],
			'rank' => [ ParamValidator::PARAM_TYPE => [ 'deprecated', 'normal', 'preferred' ] ],
			'props' => [ ParamValidator::PARAM_TYPE => [ 'references' ], ParamValidator::PARAM_DEFAULT => 'references',
				ParamValidator::PARAM_ISMULTI => true ],
		];
	}
}
