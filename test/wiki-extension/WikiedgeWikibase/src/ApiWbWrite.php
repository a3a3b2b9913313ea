<?php
/**
 * Shared part of the write modules, like Wikibase's repo/includes/Api/ModifyEntity.php:
 * POST only, a CSRF token, write mode; edits are saved with WikiPage::doUserEditContent()
 * (EntityStore::save) after MediaWiki's own edit / create permission checks.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiBase;
use Wikimedia\ParamValidator\ParamValidator;

abstract class ApiWbWrite extends ApiBase {
	use WbErrors;

	public function mustBePosted() {
		return true;
	}

	public function isWriteMode() {
		return true;
	}

	public function needsToken() {
		return 'csrf';
	}

	/** Load an existing (non-redirect) entity for editing or die with no-such-entity. */
	protected function loadOrDie( string $raw ): array {
		$id = $this->entityIdOrDie( $raw );
		$r = EntityStore::load( $id, true );
		if ( !$r || $r['entity'] === null ) {
			$this->dieWb( 'no-such-entity', 'wikibase-api-no-such-entity', [ $id ], [ 'id' => $id ] );
		}
		return $r;
	}

	/**
	 * Save through the page-save path.
	 * @return array [ 'revid' => int, 'nochange' => bool ]
	 */
	protected function saveEntity( string $id, array $data, string $summary, bool $new = false ): array {
		$title = EntityStore::title( $id );
		$this->checkTitleUserPermissions( $title, $new ? [ 'edit', 'createpage' ] : [ 'edit' ] );
		$params = $this->extractRequestParams();
		$flags = ( $new ? EDIT_NEW : EDIT_UPDATE )
			| ( !empty( $params['bot'] ) && $this->getAuthority()->isAllowed( 'bot' ) ? EDIT_FORCE_BOT : 0 );
		$r = EntityStore::save( $id, $data, $summary, $this->getAuthority(), $flags );
		if ( !$r['status']->isOK() ) {
			$this->dieStatus( $r['status'] );
		}
		return $r;
	}

	protected function userSummary(): ?string {
		$params = $this->extractRequestParams();
		return $params['summary'] ?? null;
	}

	/** "entity": { ...$fields, id, type, lastrevid[, nochange] } as ModifyEntity's ResultBuilder. */
	protected function addEntityResult( string $id, array $fields, array $saved ): void {
		$e = $fields + [ 'id' => $id, 'type' => EntityStore::typeOf( $id ), 'lastrevid' => $saved['revid'] ];
		if ( $saved['nochange'] ) {
			$e['nochange'] = '';
		}
		$this->getResult()->addValue( null, 'entity', EntityStore::markMaps( $e ) );
		$this->getResult()->addValue( null, 'success', 1 );
	}

	protected function commonParams(): array {
		return [
			'baserevid' => [ ParamValidator::PARAM_TYPE => 'integer' ],
			'summary' => [ ParamValidator::PARAM_TYPE => 'string' ],
			'tags' => [ ParamValidator::PARAM_TYPE => 'tags', ParamValidator::PARAM_ISMULTI => true ],
			'bot' => [ ParamValidator::PARAM_TYPE => 'boolean', ParamValidator::PARAM_DEFAULT => false ],
		];
	}

	/** Fill in what Wikibase's deserializer + serializer would: ids, hashes, datatypes. */
	protected function normalizeStatement( string $entityId, array $st ): array {
		$st['id'] = $st['id'] ?? EntityStore::newGuid( $entityId );
		$st['type'] = 'statement';
		$st['rank'] = $st['rank'] ?? 'normal';
		$st['mainsnak'] = $this->normalizeSnak( $st['mainsnak'] ?? [] );
		$out = [ 'mainsnak' => $st['mainsnak'], 'type' => 'statement' ];
		if ( !empty( $st['qualifiers'] ) ) {
			$out['qualifiers'] = $st['qualifiers'];
			$out['qualifiers-order'] = $st['qualifiers-order'] ?? array_keys( $st['qualifiers'] );
		}
		$out['id'] = $st['id'];
		$out['rank'] = $st['rank'];
		if ( !empty( $st['references'] ) ) {
			$out['references'] = $st['references'];
		}
		return $out;
	}

	protected function normalizeSnak( array $snak ): array {
		$pid = EntityStore::parseId( (string)( $snak['property'] ?? '' ) );
		$datatype = $pid ? EntityStore::propertyDatatype( $pid ) : null;
		if ( $pid === null || $datatype === null ) {
			$this->dieWb( 'modification-failed', 'wikibase-validator-no-such-property', [ $snak['property'] ?? '' ] );
		}
		$out = [ 'snaktype' => $snak['snaktype'] ?? 'value', 'property' => $pid ];
		if ( $out['snaktype'] === 'value' ) {
			$value = $snak['datavalue']['value'] ?? null;
			$vtype = EntityStore::valueTypeOf( $datatype );
			if ( $vtype === 'wikibase-entityid' && is_array( $value ) ) {
				$letter = ( $value['entity-type'] ?? 'item' ) === 'property' ? 'P' : 'Q';
				$eid = $value['id'] ?? ( $letter . ( $value['numeric-id'] ?? 0 ) );
				$value = [ 'entity-type' => EntityStore::typeOf( $eid ), 'numeric-id' => (int)substr( $eid, 1 ), 'id' => $eid ];
			}
			$out['datavalue'] = [ 'value' => $value, 'type' => $vtype ];
		}
		$out['hash'] = EntityStore::snakHash( $out );
		$ordered = [ 'snaktype' => $out['snaktype'], 'property' => $pid, 'hash' => $out['hash'] ];
		if ( isset( $out['datavalue'] ) ) {
			$ordered['datavalue'] = $out['datavalue'];
		}
		$ordered['datatype'] = $datatype;
		return $ordered;
	}
}
