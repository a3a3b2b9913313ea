<?php
/**
 * action=wbcreateclaim, wbsetclaimvalue, wbsetclaim, wbremoveclaims, like Wikibase's
 * repo/includes/Api/CreateClaim.php, SetClaimValue.php, SetClaim.php, RemoveClaims.php:
 * {"pageinfo":{"lastrevid":N},"success":1,"claim":{...}} ("claims":[guid...] for removal),
 * summaries "/* wbcreateclaim-create:1| *\/ [[Property:P4]]: DE", "/* wbsetclaimvalue:1| *\/ ...",
 * "/* wbsetclaim-create:2||1 *\/ ..." / "-update", "/* wbremoveclaims-remove:1| *\/ ...".
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use Wikimedia\ParamValidator\ParamValidator;

class ApiClaimWrite extends ApiWbWrite {

	public function execute() {
		$p = $this->extractRequestParams();
		switch ( $this->getModuleName() ) {
			case 'wbcreateclaim':
				$this->requireParams( $p, [ 'entity', 'snaktype', 'property' ] );
				$r = $this->loadOrDie( $p['entity'] );
				$e = $r['entity'];
				$snak = [ 'snaktype' => $p['snaktype'], 'property' => $p['property'] ];
				if ( $p['snaktype'] === 'value' ) {
					$snak['datavalue'] = [ 'value' => $this->jsonValue( $p['value'] ) ];
				}
				$st = $this->normalizeStatement( $e['id'], [ 'mainsnak' => $snak ] );
				$e['claims'][$st['mainsnak']['property']][] = $st;
				$summary = EntityStore::summary( 'wbcreateclaim-create', 1, '', [],
					EntityStore::snakSummary( $st['mainsnak'] ), $this->userSummary() );
				break;
			case 'wbsetclaimvalue':
				$this->requireParams( $p, [ 'claim', 'snaktype' ] );
				[ $e, $pid, $i ] = $this->findStatement( $p['claim'] );
				$st = $e['claims'][$pid][$i];
				$snak = [ 'snaktype' => $p['snaktype'], 'property' => $pid ];
				if ( $p['snaktype'] === 'value' ) {
					$snak['datavalue'] = [ 'value' => $this->jsonValue( $p['value'] ) ];
				}
				$st['mainsnak'] = $this->normalizeSnak( $snak );
				$e['claims'][$pid][$i] = $st;
				$summary = EntityStore::summary( 'wbsetclaimvalue', 1, '', [],
					EntityStore::snakSummary( $st['mainsnak'] ), $this->userSummary() );
				break;
			case 'wbsetclaim':
				$this->requireParams( $p, [ 'claim' ] );
				$in = json_decode( $p['claim'], true );
				if ( !is_array( $in ) || !isset( $in['id'] ) ) {
					$this->dieWb( 'invalid-claim', 'wikibase-api-invalid-claim' );
				}
				$id = $this->entityOfGuid( $in['id'] );
				$r = $this->loadOrDie( $id );
				$e = $r['entity'];
				$st = $this->normalizeStatement( $e['id'], $in );
				$pid = $st['mainsnak']['property'];
				$action = 'create';
				foreach ( $e['claims'] as $opid => $list ) {
					foreach ( $list as $j => $s ) {
						if ( $s['id'] === $st['id'] ) {
							$action = 'update';
							unset( $e['claims'][$opid][$j] );
							$e['claims'][$opid] = array_values( $e['claims'][$opid] );
							if ( !$e['claims'][$opid] ) {
								unset( $e['claims'][$opid] );
							}
						}
					}
				}
				$list = $e['claims'][$pid] ?? [];
				$index = $p['index'] ?? count( $list );
				array_splice( $list, max( 0, min( $index, count( $list ) ) ), 0, [ $st ] );
				$e['claims'][$pid] = $list;
				$summary = EntityStore::summary( "wbsetclaim-$action", 2, '', [ 1 ],
					EntityStore::snakSummary( $st['mainsnak'] ), $this->userSummary() );
				break;
			case 'wbremoveclaims':
				$this->requireParams( $p, [ 'claim' ] );
				$e = null;
				$texts = [];
				foreach ( $p['claim'] as $guid ) {
					[ $e2, $pid, $i ] = $this->findStatement( $guid, $e );
					$e = $e2;
					$texts[] = EntityStore::snakSummary( $e['claims'][$pid][$i]['mainsnak'] );
					unset( $e['claims'][$pid][$i] );
					$e['claims'][$pid] = array_values( $e['claims'][$pid] );
					if ( !$e['claims'][$pid] ) {
						unset( $e['claims'][$pid] );
					}
				}
				$summary = EntityStore::summary( 'wbremoveclaims-remove', count( $texts ), '', [],
					implode( ', ', $texts ), $this->userSummary() );
				break;
		}
		$saved = $this->saveEntity( $e['id'], $e, $summary );
		$this->getResult()->addValue( null, 'pageinfo', [ 'lastrevid' => $saved['revid'] ] );
		$this->getResult()->addValue( null, 'success', 1 );
		if ( $this->getModuleName() === 'wbremoveclaims' ) {
			$this->getResult()->addValue( null, 'claims', $p['claim'] );
		} else {
			$this->getResult()->addValue( null, 'claim', $st );
		}
	}

	private function requireParams( array $p, array $names ): void {
		foreach ( $names as $n ) {
			if ( $p[$n] === null ) {
				$this->dieWithError( [ 'apierror-missingparam', $n ] );
			}
		}
	}

	private function jsonValue( ?string $raw ) {
		$v = $raw === null ? null : json_decode( $raw, true );
		if ( $raw === null || ( $v === null && trim( $raw ) !== 'null' ) ) {
			$this->dieWb( 'invalid-snak', 'wikibase-api-invalid-snak' );
		}
		return $v;
	}

	private function entityOfGuid( string $guid ): string {
		$prefix = strstr( $guid, '$', true );
		$id = $prefix === false ? null : EntityStore::parseId( $prefix );
		if ( $id === null ) {
			$this->dieWb( 'invalid-guid', 'wikibase-api-invalid-guid', [ $guid ] );
		}
		return $id;
	}

	/** @return array [ entity, property id, index ] */
	private function findStatement( string $guid, ?array $e = null ): array {
		$id = $this->entityOfGuid( $guid );
		if ( $e === null || $e['id'] !== $id ) {
			$e = $this->loadOrDie( $id )['entity'];
		}
		foreach ( $e['claims'] ?? [] as $pid => $list ) {
			foreach ( $list as $i => $s ) {
				if ( $s['id'] === $guid ) {
					return [ $e, $pid, $i ];
				}
			}
		}
		$this->dieWb( 'no-such-claim', 'wikibase-api-no-such-claim', [ $guid ] );
	}

	public function getAllowedParams() {
		$params = [
			'wbcreateclaim' => [
				'entity' => [ ParamValidator::PARAM_TYPE => 'string' ],
				'snaktype' => [ ParamValidator::PARAM_TYPE => [ 'value', 'novalue', 'somevalue' ] ],
				'property' => [ ParamValidator::PARAM_TYPE => 'string' ],
				'value' => [ ParamValidator::PARAM_TYPE => 'text' ],
			],
			'wbsetclaimvalue' => [
				'claim' => [ ParamValidator::PARAM_TYPE => 'string' ],
				'snaktype' => [ ParamValidator::PARAM_TYPE => [ 'value', 'novalue', 'somevalue' ] ],
				'value' => [ ParamValidator::PARAM_TYPE => 'text' ],
			],
			'wbsetclaim' => [
				'claim' => [ ParamValidator::PARAM_TYPE => 'text' ],
				'index' => [ ParamValidator::PARAM_TYPE => 'integer' ],
			],
			'wbremoveclaims' => [
				'claim' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_ISMULTI => true ],
			],
		];
		return $params[$this->getModuleName()] + $this->commonParams();
	}
}
