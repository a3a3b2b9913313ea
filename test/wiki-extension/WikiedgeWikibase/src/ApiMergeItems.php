<?php
/**
 * action=wbmergeitems, like Wikibase's repo/includes/Api/MergeItems.php and
 * Interactors/ItemMergeInteractor.php: three saves through the page-save path -- the source
 * emptied ("/* wbmergeitems-to:0||Q1 *\/"), the target with the source's terms and statements
 * ("/* wbmergeitems-from:0||Q6 *\/"; a label the target already has in that language becomes an
 * alias), then the source made a redirect ("/* wbcreateredirect:0||Q6|Q1 *\/").
 * Result {"success":1,"redirected":1,"from":{id,type,lastrevid},"to":{...}}.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use Wikimedia\ParamValidator\ParamValidator;

class ApiMergeItems extends ApiWbWrite {

	public function execute() {
		$p = $this->extractRequestParams();
		$from = $this->loadOrDie( $p['fromid'] )['entity'];
		$to = $this->loadOrDie( $p['toid'] )['entity'];
		if ( $from['type'] !== 'item' || $to['type'] !== 'item' ) {
			$this->dieWb( 'not-item', 'wikibase-itemmerge-not-item' );
		}
		if ( $from['id'] === $to['id'] ) {
			$this->dieWb( 'cant-merge-self', 'wikibase-itemmerge-cant-merge-self' );
		}
		$ignore = array_flip( $p['ignoreconflicts'] ?? [] );
		foreach ( $from['descriptions'] ?? [] as $lang => $d ) {
			if ( isset( $to['descriptions'][$lang] ) && $to['descriptions'][$lang]['value'] !== $d['value']
				&& !isset( $ignore['description'] )
			) {
				$this->dieWb( 'failed-modify', 'wikibase-itemmerge-failed-modify' );
			}
		}
		foreach ( $from['labels'] ?? [] as $lang => $l ) {
			if ( !isset( $to['labels'][$lang] ) ) {
				$to['labels'][$lang] = $l;
			} elseif ( $to['labels'][$lang]['value'] !== $l['value'] ) {
				$to['aliases'][$lang][] = [ 'language' => $lang, 'value' => $l['value'] ];
			}
		}
		foreach ( $from['descriptions'] ?? [] as $lang => $d ) {
			$to['descriptions'][$lang] = $to['descriptions'][$lang] ?? $d;
		}
		foreach ( $from['aliases'] ?? [] as $lang => $list ) {
			$have = array_column( $to['aliases'][$lang] ?? [], 'value' );
			foreach ( $list as $a ) {
				if ( !in_array( $a['value'], $have, true ) ) {
					$to['aliases'][$lang][] = $a;
				}
			}
		}
		foreach ( $from['claims'] ?? [] as $pid => $list ) {
			foreach ( $list as $st ) {
				$st['id'] = EntityStore::newGuid( $to['id'] );
				$to['claims'][$pid][] = $st;
			}
		}
		$emptied = ApiEditEntity::canonical( [ 'type' => 'item', 'id' => $from['id'] ] );
		$us = $this->userSummary();
		$savedFrom = $this->saveEntity( $from['id'], $emptied,
			EntityStore::summary( 'wbmergeitems-to', 0, '', [ $to['id'] ], '', $us ) );
		$savedTo = $this->saveEntity( $to['id'], ApiEditEntity::canonical( $to ),
			EntityStore::summary( 'wbmergeitems-from', 0, '', [ $from['id'] ], '', $us ) );
		$this->saveEntity( $from['id'], [ 'entity' => $from['id'], 'redirect' => $to['id'] ],
			EntityStore::summary( 'wbcreateredirect', 0, '', [ $from['id'], $to['id'] ] ) );
		$r = $this->getResult();
		$r->addValue( null, 'success', 1 );
		$r->addValue( null, 'redirected', 1 );
		$r->addValue( null, 'from', [ 'id' => $from['id'], 'type' => 'item', 'lastrevid' => $savedFrom['revid'] ] );
		$r->addValue( null, 'to', [ 'id' => $to['id'], 'type' => 'item', 'lastrevid' => $savedTo['revid'] ] );
	}

	public function getAllowedParams() {
		return [
			'fromid' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'toid' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'ignoreconflicts' => [ ParamValidator::PARAM_TYPE => [ 'description', 'sitelink', 'statement' ],
				ParamValidator::PARAM_ISMULTI => true ],
		] + $this->commonParams();
	}
}
