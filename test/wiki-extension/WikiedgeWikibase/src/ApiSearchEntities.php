<?php
/**
 * action=wbsearchentities, like Wikibase's repo/includes/Api/SearchEntities.php: cache mode
 * public; per hit id, title, pageid, display (terms in the user language), repository, url,
 * datatype (properties), concepturi, label, description, match, aliases (when the matched text
 * is not the label).
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiBase;
use Wikimedia\ParamValidator\ParamValidator;
use Wikimedia\ParamValidator\TypeDef\IntegerDef;

class ApiSearchEntities extends ApiBase {

	public function execute() {
		$this->getMain()->setCacheMode( 'public' );
		$p = $this->extractRequestParams();
		$hits = EntitySearch::search( $p['search'], $p['language'], $p['type'], $p['strictlanguage'] );
		$total = count( $hits );
		$hits = array_slice( $hits, $p['continue'], $p['limit'] );
		$userLang = $this->getLanguage()->getCode();
		$entries = [];
		foreach ( $hits as $h ) {
			$e = $h['entity'];
			$title = $h['page']->getTitle();
			$entry = [ 'id' => $h['id'], 'title' => $title->getPrefixedText(), 'pageid' => $h['page']->getId() ];
			$display = [];
			$label = EntityStore::term( $e, 'labels', $userLang );
			$desc = EntityStore::term( $e, 'descriptions', $userLang );
			if ( $label ) {
				$display['label'] = [ 'value' => $label[0], 'language' => $label[1] ];
			}
			if ( $desc ) {
				$display['description'] = [ 'value' => $desc[0], 'language' => $desc[1] ];
			}
			$entry['display'] = $display;
			$entry['repository'] = 'local';
			$entry['url'] = $title->getFullURL();
			if ( $e['type'] === 'property' ) {
				$entry['datatype'] = $e['datatype'];
			}
			$entry['concepturi'] = EntityStore::conceptUri( $h['id'] );
			if ( $label ) {
				$entry['label'] = $label[0];
			}
			if ( $desc ) {
				$entry['description'] = $desc[0];
			}
			$entry['match'] = $h['match'];
			if ( !$label || $h['match']['text'] !== $label[0] ) {
				$entry['aliases'] = [ $h['match']['text'] ];
			}
			$entries[] = $entry;
		}
		$this->getResult()->addValue( null, 'searchinfo', [ 'search' => $p['search'] ] );
		$this->getResult()->addValue( null, 'search', $entries );
		if ( $p['continue'] + $p['limit'] < $total ) {
			$this->getResult()->addValue( null, 'search-continue', $p['continue'] + $p['limit'] );
		}
		$this->getResult()->addValue( null, 'success', 1 );
	}

	public function getAllowedParams() {
		return [
			'search' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'language' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'strictlanguage' => [ ParamValidator::PARAM_TYPE => 'boolean', ParamValidator::PARAM_DEFAULT => false ],
			'type' => [ ParamValidator::PARAM_TYPE => [ 'item', 'property' ], ParamValidator::PARAM_DEFAULT => 'item' ],
			'limit' => [ ParamValidator::PARAM_TYPE => 'limit', ParamValidator::PARAM_DEFAULT => 7,
				IntegerDef::PARAM_MAX => 50, IntegerDef::PARAM_MAX2 => 500, IntegerDef::PARAM_MIN => 0 ],
			'continue' => [ ParamValidator::PARAM_TYPE => 'integer', ParamValidator::PARAM_DEFAULT => 0 ],
			'props' => [ ParamValidator::PARAM_TYPE => [ 'url' ], ParamValidator::PARAM_DEFAULT => 'url',
				ParamValidator::PARAM_ISMULTI => true ],
			'profile' => [ ParamValidator::PARAM_TYPE => [ 'default' ], ParamValidator::PARAM_DEFAULT => 'default' ],
		];
	}
}
