<?php
/**
 * action=wbeditentity (with id= or new=item|property), like Wikibase's
 * repo/includes/Api/EditEntity.php: labels / descriptions / aliases / claims from "data";
 * summaries "wbeditentity-create-item:0|", "wbeditentity-update-languages-short:0||de",
 * "wbeditentity-update:0|"; the result is the whole entity plus lastrevid.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use Wikimedia\ParamValidator\ParamValidator;

class ApiEditEntity extends ApiWbWrite {

	public function execute() {
		$p = $this->extractRequestParams();
		$data = json_decode( $p['data'], true );
		if ( !is_array( $data ) ) {
			$this->dieWb( 'invalid-json', 'wikibase-api-invalid-json' );
		}
		if ( $p['new'] !== null ) {
			if ( $p['id'] !== null ) {
				$this->dieWb( 'param-illegal', 'wikibase-api-illegal-id-or-new' );
			}
			$id = EntityStore::nextId( $p['new'] );
			$e = [ 'type' => $p['new'], 'id' => $id ];
			if ( $p['new'] === 'property' ) {
				if ( !isset( $data['datatype'] ) ) {
					$this->dieWb( 'param-missing', 'wikibase-api-not-recognized-datatype' );
				}
				$e['datatype'] = $data['datatype'];
			}
			$e += [ 'labels' => [], 'descriptions' => [], 'aliases' => [], 'claims' => [] ];
			$old = null;
		} else {
			if ( $p['id'] === null ) {
				$this->dieWb( 'no-such-entity', 'wikibase-api-no-such-entity-for-data' );
			}
			$r = $this->loadOrDie( $p['id'] );
			$old = $r['entity'];
			$e = $old;
			$id = $e['id'];
			if ( $p['clear'] ) {
				$e['labels'] = $e['descriptions'] = $e['aliases'] = $e['claims'] = [];
			}
		}
		if ( $e['type'] === 'item' ) {
			$e['sitelinks'] = $e['sitelinks'] ?? [];
		}
		$langs = [];
		foreach ( [ 'labels', 'descriptions' ] as $f ) {
			foreach ( $data[$f] ?? [] as $lang => $t ) {
				$lang = $t['language'] ?? $lang;
				$value = isset( $t['remove'] ) ? '' : trim( (string)( $t['value'] ?? '' ) );
				if ( $value === '' ) {
					unset( $e[$f][$lang] );
				} else {
					$e[$f][$lang] = [ 'language' => $lang, 'value' => $value ];
				}
				$langs[$lang] = true;
			}
		}
		foreach ( $data['aliases'] ?? [] as $lang => $list ) {
			$list = isset( $list['language'] ) ? [ $list ] : $list;
			$values = array_column( $e['aliases'][$lang] ?? [], 'value' );
			$replace = [];
			foreach ( $list as $a ) {
				$lang = $a['language'] ?? $lang;
				if ( isset( $a['remove'] ) ) {
					$values = array_values( array_diff( $values, [ $a['value'] ] ) );
				} elseif ( isset( $a['add'] ) ) {
					$values[] = $a['value'];
				} else {
					$replace[] = $a['value'];
				}
			}
			$values = array_values( array_unique( $replace ?: $values ) );
			if ( $values ) {
				$e['aliases'][$lang] = array_map( static fn ( $v ) => [ 'language' => $lang, 'value' => $v ], $values );
			} else {
				unset( $e['aliases'][$lang] );
			}
			$langs[$lang] = true;
		}
		$otherChange = false;
		$claims = $data['claims'] ?? [];
		foreach ( $claims as $k => $v ) {
			foreach ( ( is_string( $k ) ? $v : [ $v ] ) as $st ) {
				$otherChange = true;
				if ( isset( $st['remove'] ) ) {
					foreach ( $e['claims'] as $pid => $list ) {
						$e['claims'][$pid] = array_values( array_filter( $list, static fn ( $s ) => $s['id'] !== $st['id'] ) );
						if ( !$e['claims'][$pid] ) {
							unset( $e['claims'][$pid] );
						}
					}
					continue;
				}
				$st = $this->normalizeStatement( $id, $st );
				$pid = $st['mainsnak']['property'];
				$replaced = false;
				foreach ( $e['claims'][$pid] ?? [] as $i => $s ) {
					if ( $s['id'] === $st['id'] ) {
						$e['claims'][$pid][$i] = $st;
						$replaced = true;
					}
				}
				if ( !$replaced ) {
					$e['claims'][$pid][] = $st;
				}
			}
		}
		$e = self::canonical( $e );

		if ( $old === null ) {
			$summary = EntityStore::summary( 'wbeditentity-create-' . $e['type'], 0, '', [], '', $this->userSummary() );
			$saved = $this->saveEntity( $id, $e, $summary, true );
		} elseif ( $e === $old ) {
			$saved = [ 'revid' => $r['rev']->getId(), 'nochange' => true ];
		} else {
			if ( $langs && !$otherChange && !$p['clear'] ) {
				$summary = EntityStore::summary( 'wbeditentity-update-languages-short', 0, '',
					[ implode( ', ', array_keys( $langs ) ) ], '', $this->userSummary() );
			} elseif ( $langs && !$p['clear'] ) {
				$summary = EntityStore::summary( 'wbeditentity-update-languages-and-other-short', 0, '',
					[ implode( ', ', array_keys( $langs ) ) ], '', $this->userSummary() );
			} else {
				$summary = EntityStore::summary( 'wbeditentity-' . ( $p['clear'] ? 'override' : 'update' ), 0, '', [],
					'', $this->userSummary() );
			}
			$saved = $this->saveEntity( $id, $e, $summary );
		}
		$result = $e + [ 'lastrevid' => $saved['revid'] ];
		if ( $saved['nochange'] ) {
			$result['nochange'] = '';
		}
		$this->getResult()->addValue( null, 'entity', EntityStore::markMaps( $result ) );
		$this->getResult()->addValue( null, 'success', 1 );
	}

	/** Key order of Wikibase's entity serializers. */
	public static function canonical( array $e ): array {
		$out = [ 'type' => $e['type'] ];
		if ( $e['type'] === 'property' ) {
			$out['datatype'] = $e['datatype'];
		}
		$out['id'] = $e['id'];
		foreach ( [ 'labels', 'descriptions', 'aliases', 'claims' ] as $k ) {
			$out[$k] = $e[$k] ?? [];
		}
		if ( $e['type'] === 'item' ) {
			$out['sitelinks'] = $e['sitelinks'] ?? [];
		}
		return $out;
	}

	public function getAllowedParams() {
		return [
			'id' => [ ParamValidator::PARAM_TYPE => 'string' ],
			'new' => [ ParamValidator::PARAM_TYPE => [ 'item', 'property' ] ],
			'data' => [ ParamValidator::PARAM_TYPE => 'text', ParamValidator::PARAM_REQUIRED => true ],
			'clear' => [ ParamValidator::PARAM_TYPE => 'boolean', ParamValidator::PARAM_DEFAULT => false ],
		] + $this->commonParams();
	}
}
