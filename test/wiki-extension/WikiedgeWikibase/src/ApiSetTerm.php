<?php
/**
 * action=wbsetlabel and action=wbsetdescription, like Wikibase's repo/includes/Api/SetLabel.php
 * and SetDescription.php with ChangeOpLabel/ChangeOpDescription's summaries:
 * "/* wbsetlabel-set:1|en *\/ value" (add when the language had none, remove for an empty value).
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use Wikimedia\ParamValidator\ParamValidator;

class ApiSetTerm extends ApiWbWrite {

	public function execute() {
		$p = $this->extractRequestParams();
		$field = $this->getModuleName() === 'wbsetlabel' ? 'labels' : 'descriptions';
		$r = $this->loadOrDie( $p['id'] );
		$e = $r['entity'];
		$id = $e['id'];
		$lang = $p['language'];
		$value = trim( (string)$p['value'] );
		$old = $e[$field][$lang]['value'] ?? null;
		if ( $value === '' ) {
			$action = 'remove';
			$text = (string)$old;
			unset( $e[$field][$lang] );
			$out = [ $lang => [ 'language' => $lang, 'removed' => '' ] ];
		} else {
			$action = $old === null ? 'add' : 'set';
			$text = $value;
			$e[$field][$lang] = [ 'language' => $lang, 'value' => $value ];
			$out = [ $lang => [ 'language' => $lang, 'value' => $value ] ];
		}
		if ( $old === ( $value === '' ? null : $value ) ) {
			// nothing to change: no edit, like Wikibase (capture of wbsetlabel with the same value)
			$saved = [ 'revid' => $r['rev']->getId(), 'nochange' => true ];
		} else {
			$summary = EntityStore::summary( $this->getModuleName() . '-' . $action, 1, $lang, [], $text,
				$this->userSummary() );
			$saved = $this->saveEntity( $id, $e, $summary );
		}
		$this->addEntityResult( $id, [ $field => $out ], $saved );
	}

	public function getAllowedParams() {
		return [
			'id' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'language' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'value' => [ ParamValidator::PARAM_TYPE => 'string' ],
		] + $this->commonParams();
	}
}
