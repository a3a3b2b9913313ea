<?php
/**
 * action=wbsetaliases, like Wikibase's repo/includes/Api/SetAliases.php and ChangeOpAliases:
 * "/* wbsetaliases-add:2|en *\/ a, b" (add / remove / set; add and remove together: update).
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use Wikimedia\ParamValidator\ParamValidator;

class ApiSetAliases extends ApiWbWrite {

	public function execute() {
		$p = $this->extractRequestParams();
		if ( $p['set'] === null && $p['add'] === null && $p['remove'] === null ) {
			$this->dieWb( 'param-missing', 'wikibase-api-aliases-invalid-list' );
		}
		$r = $this->loadOrDie( $p['id'] );
		$e = $r['entity'];
		$lang = $p['language'];
		$current = array_column( $e['aliases'][$lang] ?? [], 'value' );
		if ( $p['set'] !== null ) {
			$new = array_values( array_unique( array_map( 'trim', $p['set'] ) ) );
			[ $action, $args ] = [ 'set', $new ];
		} else {
			$add = array_map( 'trim', $p['add'] ?? [] );
			$remove = array_map( 'trim', $p['remove'] ?? [] );
			$new = array_values( array_unique( array_merge( array_diff( $current, $remove ), $add ) ) );
			if ( $add && $remove ) {
				[ $action, $args ] = [ 'update', array_merge( $add, $remove ) ];
			} else {
				[ $action, $args ] = $add ? [ 'add', $add ] : [ 'remove', $remove ];
			}
		}
		$list = [];
		foreach ( $new as $v ) {
			if ( $v !== '' ) {
				$list[] = [ 'language' => $lang, 'value' => $v ];
			}
		}
		if ( $list ) {
			$e['aliases'][$lang] = $list;
		} else {
			unset( $e['aliases'][$lang] );
		}
		if ( array_column( $list, 'value' ) === $current ) {
			$saved = [ 'revid' => $r['rev']->getId(), 'nochange' => true ];
		} else {
			$summary = EntityStore::summary( "wbsetaliases-$action", count( $args ), $lang, [],
				implode( ', ', $args ), $this->userSummary() );
			$saved = $this->saveEntity( $e['id'], $e, $summary );
		}
		$this->addEntityResult( $e['id'], [ 'aliases' => $list ? [ $lang => $list ] : [] ], $saved );
	}

	public function getAllowedParams() {
		return [
			'id' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'language' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'add' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_ISMULTI => true ],
			'remove' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_ISMULTI => true ],
			'set' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_ISMULTI => true ],
		] + $this->commonParams();
	}
}
