<?php
/**
 * Term search shared by wbsearchentities and list/generator=wbsearch, like Wikibase's
 * repo/includes/Api/EntitySearchHelper.php (SQL term store, no CirrusSearch): an exact id
 * first, then labels and aliases starting with the text (case-insensitive) in the search
 * language or its fallbacks, in id order.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

class EntitySearch {

	/**
	 * @return array[] each [ 'id', 'entity', 'page', 'match' => [type, language?, text] ]
	 */
	public static function search( string $text, string $lang, string $type, bool $strict = false ): array {
		$results = [];
		$text = trim( $text );
		if ( $text === '' ) {
			return [];
		}
		$seen = [];
		$id = EntityStore::parseId( $text );
		if ( $id !== null && EntityStore::typeOf( $id ) === $type ) {
			$r = EntityStore::load( $id );
			if ( $r && $r['entity'] ) {
				$results[] = [ 'id' => $id, 'entity' => $r['entity'], 'page' => $r['page'],
					'match' => [ 'type' => 'entityId', 'text' => $id ] ];
				$seen[$id] = true;
			}
		}
		$langs = $strict ? [ $lang ] : EntityStore::fallbackChain( $lang );
		$needle = mb_strtolower( $text );
		foreach ( EntityStore::listIds( $type ) as $eid ) {
			if ( isset( $seen[$eid] ) ) {
				continue;
			}
			$r = EntityStore::load( $eid );
			if ( !$r || !$r['entity'] ) {
				continue;
			}
			$e = $r['entity'];
			$match = null;
			foreach ( $langs as $code ) {
				$label = $e['labels'][$code]['value'] ?? null;
				if ( $label !== null && str_starts_with( mb_strtolower( $label ), $needle ) ) {
					$match = [ 'type' => 'label', 'language' => $code, 'text' => $label ];
					break;
				}
				foreach ( $e['aliases'][$code] ?? [] as $alias ) {
					if ( str_starts_with( mb_strtolower( $alias['value'] ), $needle ) ) {
						$match = [ 'type' => 'alias', 'language' => $code, 'text' => $alias['value'] ];
						break 2;
					}
				}
			}
			if ( $match ) {
				$results[] = [ 'id' => $eid, 'entity' => $e, 'page' => $r['page'], 'match' => $match ];
			}
		}
		return $results;
	}
}
