<?php
/**
 * action=wbformatvalue, like Wikibase's repo/includes/Api/FormatSnakValue.php: cache mode
 * public; an entity id value prints the entity's label in the user language (text/html: a
 * link to the entity page), a quantity is a localised number.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiBase;
use Html;
use Wikimedia\ParamValidator\ParamValidator;

class ApiFormatValue extends ApiBase {
	use WbErrors;

	public function execute() {
		$this->getMain()->setCacheMode( 'public' );
		$p = $this->extractRequestParams();
		$dv = json_decode( $p['datavalue'], true );
		if ( !is_array( $dv ) || !isset( $dv['type'] ) || !array_key_exists( 'value', $dv ) ) {
			$this->dieWb( 'baddatavalue', 'wikibase-api-baddatavalue' );
		}
		$html = str_starts_with( $p['generate'], 'text/html' );
		$lang = $this->getLanguage();
		if ( $dv['type'] === 'wikibase-entityid' ) {
			$v = $dv['value'];
			$id = $v['id'] ?? ( ( ( $v['entity-type'] ?? 'item' ) === 'property' ? 'P' : 'Q' ) . ( $v['numeric-id'] ?? 0 ) );
			$label = EntityStore::label( $id, $lang->getCode() );
			if ( $html ) {
				$title = EntityStore::title( $id );
				$result = Html::element( 'a', [ 'title' => $title->getPrefixedText(), 'href' => $title->getLocalURL() ],
					$label ?? $id );
			} else {
				$result = $label ?? $id;
			}
		} else {
			$text = EntityStore::formatValue( $dv, $lang );
			$result = $html ? htmlspecialchars( $text ) : $text;
		}
		$this->getResult()->addValue( null, 'result', $result );
	}

	public function getAllowedParams() {
		return [
			'generate' => [ ParamValidator::PARAM_TYPE => [ 'text/plain', 'text/x-wiki', 'text/html',
				'text/html; disposition=verbose', 'text/html; disposition=verbose-preview' ],
				ParamValidator::PARAM_DEFAULT => 'text/x-wiki' ],
			'datavalue' => [ ParamValidator::PARAM_TYPE => 'text', ParamValidator::PARAM_REQUIRED => true ],
			'datatype' => [ ParamValidator::PARAM_TYPE => 'string' ],
			'property' => [ ParamValidator::PARAM_TYPE => 'string' ],
			'options' => [ ParamValidator::PARAM_TYPE => 'text' ],
		];
	}
}
