<?php
/**
 * Entity pages: id <-> title, loading, saving through WikiPage::doUserEditContent() (so the
 * revision, recentchanges row, CDN purges and jobs are MediaWiki's own), id allocation, and
 * the small formatting helpers the modules share.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiResult;
use IDBAccessObject;
use Language;
use MediaWiki\MediaWikiServices;
use MediaWiki\Permissions\Authority;
use MediaWiki\Revision\RevisionRecord;
use MediaWiki\Revision\SlotRecord;
use Title;
use WikiPage;

class EntityStore {

	public static function config( string $name ) {
		return MediaWikiServices::getInstance()->getMainConfig()->get( $name );
	}

	public static function itemNs(): int {
		return (int)self::config( 'WikiedgeWikibaseItemNamespace' );
	}

	public static function propertyNs(): int {
		return (int)self::config( 'WikiedgeWikibasePropertyNamespace' );
	}

	/** Normalised id (ItemId/NumericPropertyId accept lower case) or null if not an entity id. */
	public static function parseId( string $s ): ?string {
		if ( preg_match( '/^([QqPp])([1-9]\d{0,9})$/', trim( $s ), $m ) ) {
			return strtoupper( $m[1] ) . $m[2];
		}
		return null;
	}

	public static function typeOf( string $id ): string {
		return $id[0] === 'Q' ? 'item' : 'property';
	}

	public static function modelOf( string $id ): string {
		return 'wikibase-' . self::typeOf( $id );
	}

	public static function title( string $id ): Title {
		return Title::makeTitle( $id[0] === 'Q' ? self::itemNs() : self::propertyNs(), $id );
	}

	public static function idFromTitle( Title $title ): ?string {
		$id = self::parseId( $title->getDBkey() );
		if ( $id === null || $title->getDBkey() !== $id ) {
			return null;
		}
		$ns = $id[0] === 'Q' ? self::itemNs() : self::propertyNs();
		return $title->getNamespace() === $ns ? $id : null;
	}

	public static function conceptUri( string $id ): string {
		$base = self::config( 'WikiedgeWikibaseConceptBaseUri' )
			?? ( self::config( 'Server' ) . '/entity/' );
		return $base . $id;
	}

	/**
	 * @return array|null null if the page does not exist; else [
	 *   'entity' => array|null (null for a redirect), 'redirect' => string|null (target id),
	 *   'page' => WikiPage, 'rev' => RevisionRecord ]
	 */
	public static function load( string $id, bool $latest = false ): ?array {
		$page = MediaWikiServices::getInstance()->getWikiPageFactory()
			->newFromTitle( self::title( $id ) );
		$page->loadPageData( $latest ? IDBAccessObject::READ_LATEST : IDBAccessObject::READ_NORMAL );
		$rev = $page->getRevisionRecord();
		if ( !$rev ) {
			return null;
		}
		$content = $rev->getContent( SlotRecord::MAIN, RevisionRecord::RAW );
		$data = $content ? json_decode( $content->serialize(), true ) : null;
		if ( !is_array( $data ) ) {
			return null;
		}
		if ( isset( $data['redirect'] ) ) {
			return [ 'entity' => null, 'redirect' => (string)$data['redirect'], 'page' => $page, 'rev' => $rev ];
		}
		return [ 'entity' => $data, 'redirect' => null, 'page' => $page, 'rev' => $rev ];
	}

	/**
	 * Load following one redirect.
	 * @return array|null as load(), plus 'from' (the requested id) when a redirect was followed
	 */
	public static function loadResolved( string $id, bool $latest = false ): ?array {
		$r = self::load( $id, $latest );
		if ( $r && $r['redirect'] !== null ) {
			$target = self::parseId( $r['redirect'] );
			$t = $target ? self::load( $target, $latest ) : null;
			if ( !$t || $t['entity'] === null ) {
				return null;
			}
			$t['from'] = $id;
			return $t;
		}
		return $r;
	}

	/**
	 * Save an entity (or redirect) array as the page's new revision.
	 * @return array [ 'status' => PageUpdateStatus, 'revid' => int (new or current), 'nochange' => bool ]
	 */
	public static function save( string $id, array $data, string $summary, Authority $performer,
		int $flags = 0
	): array {
		$title = self::title( $id );
		$page = MediaWikiServices::getInstance()->getWikiPageFactory()->newFromTitle( $title );
		$content = new EntityContent( self::encode( $data ), self::modelOf( $id ) );
		$status = $page->doUserEditContent( $content, $performer, $summary, $flags );
		// MediaWiki 1.39: a Status whose value holds 'revision-record' (null when nothing changed)
		$rev = $status->isOK() ? ( $status->getValue()['revision-record'] ?? null ) : null;
		if ( $rev ) {
			return [ 'status' => $status, 'revid' => $rev->getId(), 'nochange' => false ];
		}
		$page->loadPageData( IDBAccessObject::READ_LATEST );
		return [ 'status' => $status, 'revid' => (int)$page->getLatest(), 'nochange' => true ];
	}

	public static function encode( array $data ): string {
		return json_encode( $data, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION );
	}

	/** Ids of existing (non-redirect) entities of a type, in numeric order. */
	public static function listIds( string $type ): array {
		$ns = $type === 'item' ? self::itemNs() : self::propertyNs();
		$letter = $type === 'item' ? 'Q' : 'P';
		$dbr = MediaWikiServices::getInstance()->getDBLoadBalancer()->getConnection( DB_REPLICA );
		$res = $dbr->select( 'page', [ 'page_title' ],
			[ 'page_namespace' => $ns, 'page_is_redirect' => 0 ], __METHOD__ );
		$ids = [];
		foreach ( $res as $row ) {
			if ( preg_match( '/^' . $letter . '[1-9]\d*$/', $row->page_title ) ) {
				$ids[] = $row->page_title;
			}
		}
		usort( $ids, static fn ( $a, $b ) => (int)substr( $a, 1 ) <=> (int)substr( $b, 1 ) );
		return $ids;
	}

	/** Next free id: above every page and deleted page (Wikibase's id counter never reuses ids). */
	public static function nextId( string $type ): string {
		$ns = $type === 'item' ? self::itemNs() : self::propertyNs();
		$letter = $type === 'item' ? 'Q' : 'P';
		$dbw = MediaWikiServices::getInstance()->getDBLoadBalancer()->getConnection( DB_PRIMARY );
		$max = 0;
		foreach ( [ [ 'page', 'page_title', 'page_namespace' ], [ 'archive', 'ar_title', 'ar_namespace' ] ] as [ $t, $f, $n ] ) {
			$res = $dbw->select( $t, [ 'title' => $f ], [ $n => $ns ], __METHOD__ );
			foreach ( $res as $row ) {
				if ( preg_match( '/^' . $letter . '([1-9]\d*)$/', $row->title, $m ) ) {
					$max = max( $max, (int)$m[1] );
				}
			}
		}
		return $letter . ( $max + 1 );
	}

	/** Statement GUID like Wikibase's GuidGenerator: "Q1$" + upper-case UUID v4. */
	public static function newGuid( string $id ): string {
		$b = random_bytes( 16 );
		$b[6] = chr( ord( $b[6] ) & 0x0f | 0x40 );
		$b[8] = chr( ord( $b[8] ) & 0x3f | 0x80 );
		$h = strtoupper( bin2hex( $b ) );
		return $id . '$' . substr( $h, 0, 8 ) . '-' . substr( $h, 8, 4 ) . '-' . substr( $h, 12, 4 ) . '-'
			. substr( $h, 16, 4 ) . '-' . substr( $h, 20 );
	}

	/** Snak hash (Wikibase hashes the PHP-serialized snak; this hashes its JSON: same length). */
	public static function snakHash( array $snak ): string {
		unset( $snak['hash'], $snak['datatype'] );
		return sha1( self::encode( $snak ) );
	}

	/** Wikibase's autocomment: "/* module[-action]:count|lang[|arg...] *\/ text". */
	public static function summary( string $key, int $count, string $lang = '', array $args = [],
		string $text = '', ?string $userSummary = null
	): string {
		$s = "/* $key:$count|$lang" . ( $args ? '|' . implode( '|', $args ) : '' ) . ' */';
		if ( $userSummary !== null && $userSummary !== '' ) {
			$text = $text !== '' ? "$text, $userSummary" : $userSummary;
		}
		return $text !== '' ? "$s $text" : $s;
	}

	/** Language codes to try for $lang: itself, then MediaWiki's fallbacks (ending in en). */
	public static function fallbackChain( string $lang ): array {
		$chain = array_merge( [ $lang ], MediaWikiServices::getInstance()->getLanguageFallback()->getAll( $lang ) );
		return array_values( array_unique( $chain ) );
	}

	/** [ value, language ] of the term (labels|descriptions) in $lang or its fallbacks, or null. */
	public static function term( array $entity, string $field, string $lang ): ?array {
		foreach ( self::fallbackChain( $lang ) as $code ) {
			if ( isset( $entity[$field][$code]['value'] ) ) {
				return [ $entity[$field][$code]['value'], $code ];
			}
		}
		return null;
	}

	public static function label( string $id, string $lang ): ?string {
		$r = self::loadResolved( $id );
		if ( !$r || !$r['entity'] ) {
			return null;
		}
		$t = self::term( $r['entity'], 'labels', $lang );
		return $t ? $t[0] : null;
	}

	/** The datatype of a property, or null. */
	public static function propertyDatatype( string $pid ): ?string {
		$r = self::load( $pid );
		return $r && $r['entity'] ? ( $r['entity']['datatype'] ?? null ) : null;
	}

	public static function valueTypeOf( string $datatype ): string {
		return [
			'wikibase-item' => 'wikibase-entityid', 'wikibase-property' => 'wikibase-entityid',
			'quantity' => 'quantity', 'time' => 'time', 'globe-coordinate' => 'globecoordinate',
			'monolingualtext' => 'monolingualtext',
		][$datatype] ?? 'string';
	}

	/** Plain text of a data value (wbformatvalue text/plain, edit summaries). */
	public static function formatValue( array $dv, Language $lang, bool $wikiLinks = false ): string {
		$v = $dv['value'] ?? null;
		switch ( $dv['type'] ?? '' ) {
			case 'wikibase-entityid':
				$id = $v['id'] ?? ( ( ( $v['entity-type'] ?? 'item' ) === 'property' ? 'P' : 'Q' ) . ( $v['numeric-id'] ?? 0 ) );
				if ( $wikiLinks ) {
					return '[[' . self::title( $id )->getPrefixedText() . ']]';
				}
				return self::label( $id, $lang->getCode() ) ?? $id;
			case 'quantity':
				$amount = ltrim( (string)( $v['amount'] ?? '' ), '+' );
				$s = $lang->formatNum( $amount );
				$unit = (string)( $v['unit'] ?? '1' );
				if ( $unit !== '1' ) {
					$uid = self::parseId( substr( $unit, strrpos( $unit, '/' ) + 1 ) );
					$s .= ' ' . ( $uid ? ( self::label( $uid, $lang->getCode() ) ?? $uid ) : $unit );
				}
				return $s;
			case 'time':
				if ( !preg_match( '/^([+-])(\d+)-(\d\d)-(\d\d)/', $v['time'] ?? '', $m ) ) {
					return (string)( $v['time'] ?? '' );
				}
				$year = (int)$m[2];
				$prec = (int)( $v['precision'] ?? 11 );
				$y = ( $m[1] === '-' ? '-' : '' ) . $year;
				if ( $prec <= 9 ) {
					return $y;
				}
				$month = $lang->getMonthName( max( 1, (int)$m[3] ) );
				return $prec === 10 ? "$month $y" : ( (int)$m[4] ) . " $month $y";
			case 'globecoordinate':
				return $lang->formatNum( $v['latitude'] ?? 0 ) . ', ' . $lang->formatNum( $v['longitude'] ?? 0 );
			case 'monolingualtext':
				return (string)( $v['text'] ?? '' );
			default:
				return is_scalar( $v ) ? (string)$v : self::encode( (array)$v );
		}
	}

	/** "[[Property:P2]]: 3,700,000" (Wikibase's ClaimSummaryBuilder / SummaryFormatter). */
	public static function snakSummary( array $snak ): string {
		$p = '[[' . self::title( $snak['property'] )->getPrefixedText() . ']]';
		$lang = MediaWikiServices::getInstance()->getContentLanguage();
		if ( ( $snak['snaktype'] ?? 'value' ) !== 'value' ) {
			return "$p: " . ( $snak['snaktype'] === 'novalue' ? 'no value' : 'unknown value' );
		}
		return "$p: " . self::formatValue( $snak['datavalue'] ?? [], $lang, true );
	}

	/**
	 * Mark the maps of an entity serialization as JSON objects even when empty (ApiResult writes
	 * an empty PHP array as [] otherwise; Wikibase's ResultBuilder does the same marking).
	 */
	public static function markMaps( array $e ): array {
		foreach ( [ 'labels', 'descriptions', 'aliases', 'claims', 'sitelinks' ] as $k ) {
			if ( array_key_exists( $k, $e ) && is_array( $e[$k] ) ) {
				$e[$k][ApiResult::META_TYPE] = 'assoc';
			}
		}
		return $e;
	}
}
