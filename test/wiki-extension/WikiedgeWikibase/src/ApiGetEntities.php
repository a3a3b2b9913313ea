<?php
/**
 * action=wbgetentities, like Wikibase's repo/includes/Api/GetEntities.php: cache mode public
 * (ApiMain then honours maxage/smaxage), entities keyed by the requested id, "missing" for
 * absent or deleted ones, "redirects" {from,to} when a redirect was followed, no-such-entity
 * for an id that does not parse, param-missing without ids or sites+titles.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiBase;
use ApiResult;
use MWTimestamp;
use Wikimedia\ParamValidator\ParamValidator;

class ApiGetEntities extends ApiBase {
	use WbErrors;

	public function execute() {
		$this->getMain()->setCacheMode( 'public' );
		$params = $this->extractRequestParams();
		$ids = $params['ids'] ?? [];
		if ( !$ids ) {
			// No sites are configured (there is no sites table), so sites+titles cannot
			// name anything: Wikibase answers param-missing (capture of sites=enwiki).
			$this->dieWb( 'param-missing', 'wikibase-api-illegal-ids-or-sites-titles-selector' );
		}
		$props = array_flip( $params['props'] );
		$languages = $params['languages'] ?? null;
		$fallback = $params['languagefallback'];
		$follow = $params['redirects'] === 'yes';

		$out = [];
		foreach ( array_unique( $ids ) as $raw ) {
			$id = $this->entityIdOrDie( $raw );
			$r = $follow ? EntityStore::loadResolved( $id ) : EntityStore::load( $id );
			if ( !$r || $r['entity'] === null ) {
				// fv1: "missing":"" (ApiResult's BC transform of true), fv2: true
				$out[$id] = [ 'id' => $id, 'missing' => true ];
				continue;
			}
			$out[$id] = $this->serialize( $r, $props, $languages, $fallback );
		}
		$out[ApiResult::META_TYPE] = 'assoc';
		$this->getResult()->addValue( null, 'entities', $out );
		$this->getResult()->addValue( null, 'success', 1 );
	}

	private function serialize( array $r, array $props, ?array $languages, bool $fallback ): array {
		$e = $r['entity'];
		$s = [];
		if ( isset( $props['info'] ) ) {
			$title = $r['page']->getTitle();
			$s['pageid'] = $r['page']->getId();
			$s['ns'] = $title->getNamespace();
			$s['title'] = $title->getPrefixedText();
			$s['lastrevid'] = $r['rev']->getId();
			$s['modified'] = MWTimestamp::convert( TS_ISO_8601, $r['rev']->getTimestamp() );
		}
		if ( isset( $r['from'] ) ) {
			$s['redirects'] = [ 'from' => $r['from'], 'to' => $e['id'] ];
		}
		$s['type'] = $e['type'];
		if ( $e['type'] === 'property' && isset( $props['datatype'] ) ) {
			$s['datatype'] = $e['datatype'];
		}
		$s['id'] = $e['id'];
		foreach ( [ 'labels', 'descriptions' ] as $f ) {
			if ( isset( $props[$f] ) ) {
				$s[$f] = $this->terms( $e[$f] ?? [], $languages, $fallback );
			}
		}
		if ( isset( $props['aliases'] ) ) {
			$s['aliases'] = $languages === null ? ( $e['aliases'] ?? [] )
				: array_intersect_key( $e['aliases'] ?? [], array_flip( $languages ) );
		}
		if ( isset( $props['claims'] ) ) {
			$s['claims'] = $e['claims'] ?? [];
		}
		if ( $e['type'] === 'item' && isset( $props['sitelinks'] ) ) {
			$s['sitelinks'] = $e['sitelinks'] ?? [];
		}
		return EntityStore::markMaps( $s );
	}

	private function terms( array $terms, ?array $languages, bool $fallback ): array {
		if ( $languages === null ) {
			return $terms;
		}
		$out = [];
		foreach ( $languages as $lang ) {
			if ( isset( $terms[$lang] ) ) {
				$out[$lang] = $terms[$lang];
			} elseif ( $fallback ) {
				foreach ( EntityStore::fallbackChain( $lang ) as $code ) {
					if ( isset( $terms[$code] ) ) {
						// Wikibase's TermFallback serialization (capture: languagefallback=1)
						$out[$lang] = [ 'value' => $terms[$code]['value'], 'language' => $code, 'for-language' => $lang ];
						break;
					}
				}
			}
		}
		return $out;
	}

	public function getAllowedParams() {
		return [
			'ids' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_ISMULTI => true ],
			// no sites are configured: every site id is "unrecognized" (capture: warning on enwiki)
			'sites' => [ ParamValidator::PARAM_TYPE => [], ParamValidator::PARAM_ISMULTI => true ],
			'titles' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_ISMULTI => true ],
			'redirects' => [ ParamValidator::PARAM_TYPE => [ 'yes', 'no' ], ParamValidator::PARAM_DEFAULT => 'yes' ],
			'props' => [
				ParamValidator::PARAM_TYPE => [ 'info', 'sitelinks', 'sitelinks/urls', 'aliases', 'labels',
					'descriptions', 'claims', 'datatype' ],
				ParamValidator::PARAM_DEFAULT => 'info|sitelinks|aliases|labels|descriptions|claims|datatype',
				ParamValidator::PARAM_ISMULTI => true,
			],
			'languages' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_ISMULTI => true ],
			'languagefallback' => [ ParamValidator::PARAM_TYPE => 'boolean', ParamValidator::PARAM_DEFAULT => false ],
			'normalize' => [ ParamValidator::PARAM_TYPE => 'boolean', ParamValidator::PARAM_DEFAULT => false ],
			'sitefilter' => [ ParamValidator::PARAM_TYPE => [], ParamValidator::PARAM_ISMULTI => true ],
		];
	}

	protected function getExamplesMessages() {
		return [ 'action=wbgetentities&ids=Q1' => 'apihelp-wbgetentities-example-1' ];
	}
}
