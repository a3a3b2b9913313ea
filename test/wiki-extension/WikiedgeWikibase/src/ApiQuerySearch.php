<?php
/**
 * list=wbsearch and generator=wbsearch, like Wikibase's repo/includes/Api/QuerySearchEntities.php:
 * ns, title, pageid, displaytext; cache mode public.
 *
 * @license GPL-2.0-or-later
 */

namespace MediaWiki\Extension\WikiedgeWikibase;

use ApiPageSet;
use ApiQuery;
use ApiQueryGeneratorBase;
use Wikimedia\ParamValidator\ParamValidator;
use Wikimedia\ParamValidator\TypeDef\IntegerDef;

class ApiQuerySearch extends ApiQueryGeneratorBase {

	public function __construct( ApiQuery $query, string $moduleName ) {
		parent::__construct( $query, $moduleName, 'wbs' );
	}

	public function execute() {
		$this->run();
	}

	public function executeGenerator( $resultPageSet ) {
		$this->run( $resultPageSet );
	}

	public function getCacheMode( $params ) {
		return 'public';
	}

	private function run( ?ApiPageSet $resultPageSet = null ) {
		$p = $this->extractRequestParams();
		$hits = array_slice( EntitySearch::search( $p['search'], $p['language'], $p['type'], $p['strictlanguage'] ),
			0, $p['limit'] );
		$userLang = $this->getLanguage()->getCode();
		if ( $resultPageSet ) {
			$titles = [];
			foreach ( $hits as $h ) {
				$titles[] = $h['page']->getTitle();
			}
			$resultPageSet->populateFromTitles( $titles );
			foreach ( $hits as $h ) {
				$label = EntityStore::term( $h['entity'], 'labels', $userLang );
				$resultPageSet->setGeneratorData( $h['page']->getTitle(), [ 'displaytext' => $label ? $label[0] : $h['id'] ] );
			}
			return;
		}
		foreach ( $hits as $h ) {
			$title = $h['page']->getTitle();
			$label = EntityStore::term( $h['entity'], 'labels', $userLang );
			$this->getResult()->addValue( [ 'query', $this->getModuleName() ], null, [
				'ns' => $title->getNamespace(), 'title' => $title->getPrefixedText(),
				'pageid' => $h['page']->getId(), 'displaytext' => $label ? $label[0] : $h['id'],
			] );
		}
		$this->getResult()->addIndexedTagName( [ 'query', $this->getModuleName() ], $this->getModulePrefix() );
	}

	public function getAllowedParams() {
		return [
			'search' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_REQUIRED => true ],
			'language' => [ ParamValidator::PARAM_TYPE => 'string', ParamValidator::PARAM_DEFAULT => 'en' ],
			'strictlanguage' => [ ParamValidator::PARAM_TYPE => 'boolean', ParamValidator::PARAM_DEFAULT => false ],
			'type' => [ ParamValidator::PARAM_TYPE => [ 'item', 'property' ], ParamValidator::PARAM_DEFAULT => 'item' ],
			'limit' => [ ParamValidator::PARAM_TYPE => 'limit', ParamValidator::PARAM_DEFAULT => 7,
				IntegerDef::PARAM_MAX => 50, IntegerDef::PARAM_MAX2 => 500, IntegerDef::PARAM_MIN => 0 ],
			'profile' => [ ParamValidator::PARAM_TYPE => [ 'default' ], ParamValidator::PARAM_DEFAULT => 'default' ],
		];
	}
}
