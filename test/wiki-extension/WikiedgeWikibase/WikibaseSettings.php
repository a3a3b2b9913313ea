<?php
/**
 * Settings for the WikiedgeWikibase stand-in, required by the generated DATA/WikiedgeSettings.php
 * of scripts/wiki/setup.sh when the wiki was set up with --wikibase. Expects
 * $wikiedgeWikibaseItemsInMain (bool) to be set by the caller.
 *
 * Layouts:
 * - default (Wikibase's repo/config/Wikibase.example.php): items in 120 Item:, properties in
 *   122 Property:, each with its talk namespace.
 * - items in main (as on Wikidata): items are pages Q1, Q2, ... in namespace 0; properties stay
 *   in 122. Namespace 0 then gets the default content model wikibase-item, because Wikibase's
 *   RepoHooks::onSetupAfterCache() (repo/includes/RepoHooks.php) sets
 *   $wgNamespaceContentModels[$namespace] for every entity namespace, namespace 0 included; so
 *   siteinfo shows "defaultcontentmodel":"wikibase-item" on namespace 0 there too.
 *
 * @license GPL-2.0-or-later
 */

$wgExtraNamespaces[120] = 'Item';
$wgExtraNamespaces[121] = 'Item_talk';
$wgExtraNamespaces[122] = 'Property';
$wgExtraNamespaces[123] = 'Property_talk';

$wgWikiedgeWikibaseItemNamespace = empty( $wikiedgeWikibaseItemsInMain ) ? 120 : 0;
$wgWikiedgeWikibasePropertyNamespace = 122;
$wgNamespaceContentModels[$wgWikiedgeWikibaseItemNamespace] = 'wikibase-item';
$wgNamespaceContentModels[122] = 'wikibase-property';

wfLoadExtension( 'WikiedgeWikibase', __DIR__ . '/extension.json' );
