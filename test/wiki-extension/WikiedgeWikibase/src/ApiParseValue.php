<?php
/**
 * action=wbparsevalue, like Wikibase's repo/includes/Api/ParseValue.php for the data types the
 * tests use (string, external-id, url, time, quantity, wikibase-item, wikibase-property,
 * monolingualtext is not parsed). Cache mode public; a value that does not parse gives a
 * top-level "error" plus the per-value error in "results", in a normal (cacheable) answer, as
 * the capture of datatype=quantity&values=abc shows.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiBase;
use Wikimedia\ParamValidator\ParamValidator;

class ApiParseValue extends ApiBase {

	private const GREGORIAN = 'http://www.wikidata.org/entity/Q1985727';
	private const JULIAN = 'http://www.wikidata.org/entity/Q1985786';

	public function execute() {
		$this->getMain()->setCacheMode( 'public' );
		$p = $this->extractRequestParams();
		$type = $p['datatype'] ?? $p['parser'] ?? 'string';
		$results = [];
		$error = null;
		foreach ( $p['values'] as $raw ) {
			$parsed = $this->parse( $type, $raw );
			if ( isset( $parsed['error'] ) ) {
				$key = 'wikibase-parse-error-' . $parsed['error'];
				$text = wfMessage( $key )->inLanguage( $this->getLanguage() )->text();
				$error = $error ?? [ 'code' => $key, 'info' => $text ];
				$results[] = [ 'raw' => $raw, 'error' => 'ValueParsers\\ParseException',
					'error-info' => $parsed['info'], 'expected-format' => $parsed['error'],
					'messages' => [ [ 'name' => $key, 'parameters' => [], 'html' => [ '*' => $text ] ] ] ];
			} else {
				$results[] = [ 'raw' => $raw ] + $parsed;
			}
		}
		if ( $error ) {
			$this->getResult()->addValue( null, 'error', $error );
		}
		$this->getResult()->addValue( null, 'results', $results );
	}

	private function parse( string $type, string $raw ): array {
		$s = trim( $raw );
		switch ( $type ) {
			case 'time':
				if ( preg_match( '/^([+-]?)(\d{1,16})(?:-(\d\d?)(?:-(\d\d?))?)?$/', $s, $m ) ) {
					$year = (int)$m[2];
					$month = isset( $m[3] ) ? (int)$m[3] : 0;
					$day = isset( $m[4] ) ? (int)$m[4] : 0;
					$prec = $day ? 11 : ( $month ? 10 : 9 );
					$time = ( $m[1] === '-' ? '-' : '+' ) . sprintf( '%04d-%02d-%02dT00:00:00Z', $year, $month, $day );
					return [ 'value' => [ 'time' => $time, 'timezone' => 0, 'before' => 0, 'after' => 0,
						'precision' => $prec, 'calendarmodel' => ( $m[1] === '-' || $year < 1583 ) ? self::JULIAN : self::GREGORIAN ],
						'type' => 'time' ];
				}
				return [ 'error' => 'time', 'info' => 'Malformed time' ];
			case 'quantity':
				$n = str_replace( ',', '', $s );
				if ( preg_match( '/^([+-]?)(\d+(?:\.\d+)?)$/', $n, $m ) ) {
					return [ 'value' => [ 'amount' => ( $m[1] === '-' ? '-' : '+' ) . $m[2], 'unit' => '1' ], 'type' => 'quantity' ];
				}
				return [ 'error' => 'quantity', 'info' => 'Malformed quantity' ];
			case 'wikibase-item':
			case 'wikibase-property':
				$id = EntityStore::parseId( $s );
				if ( $id === null ) {
					return [ 'error' => 'entityid', 'info' => 'Malformed entity id' ];
				}
				return [ 'value' => [ 'entity-type' => EntityStore::typeOf( $id ), 'numeric-id' => (int)substr( $id, 1 ),
					'id' => $id ], 'type' => 'wikibase-entityid' ];
			default:
				return [ 'value' => $s, 'type' => 'string' ];
		}
	}

	public function getAllowedParams() {
		return [
			'datatype' => [ ParamValidator::PARAM_TYPE => [ 'string', 'external-id', 'url', 'commonsMedia', 'time',
				'quantity', 'wikibase-item', 'wikibase-property', 'globe-coordinate', 'monolingualtext' ] ],
			'parser' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_DEPRECATED => true ],
			'values' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_ISMULTI => true,
				ParamValidator::PARAM_REQUIRED => true ],
			'options' => [ ParamValidator::PARAM_TYPE => 'text' ],
			'validate' => [ ParamValidator::PARAM_TYPE => 'boolean', ParamValidator::PARAM_DEFAULT => false ],
		];
	}
}
