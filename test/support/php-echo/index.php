<?php
// Echo server for test/support/php-echo.ts: reports how PHP itself built $_GET, $_POST and
// $_COOKIE for the raw request it received, so tests can compare src/mediawiki/php-input.ts with real PHP.
//
// PHP strings are byte strings and array order matters, so plain json_encode() of the arrays
// is not exact: invalid UTF-8 makes it fail, and a PHP list would become a JSON array that
// loses its keys. Each array is therefore emitted as an ordered list of entries:
//   {"k": "<hex of key bytes>", "v": "<hex of value bytes>"}   for a string value
//   {"k": "<hex of key bytes>", "a": [ ...entries... ]}        for an array value
// Integer keys are emitted as their decimal string (which is the only string PHP maps to
// that integer key), with "i": true so tests can check which keys PHP made integers.

function wikiedge_pairs(array $arr): array
{
    $out = [];
    foreach ($arr as $k => $v) {
        $e = ['k' => bin2hex((string) $k)];
        if (is_int($k)) {
            $e['i'] = true;
        }
        if (is_array($v)) {
            $e['a'] = wikiedge_pairs($v);
        } else {
            $e['v'] = bin2hex((string) $v);
        }
        $out[] = $e;
    }
    return $out;
}

// MediaWiki 1.39's WebRequest::getAcceptLang() (includes/WebRequest.php:1190), as it reads
// $_SERVER['HTTP_ACCEPT_LANGUAGE']: the language codes in lower case, by q, each with its q.
function wikiedge_accept_lang(string $acceptLang): array
{
    if (!$acceptLang) {
        return [];
    }
    $acceptLang = strtolower($acceptLang);
    if (!preg_match_all(
        '/
            # a language code or a star is required
            ([a-z]{1,8}(?:-[a-z]{1,8})*|\*)
            # from here everything is optional
            \s*
            (?:
                # this accepts only numbers in the range ;q=0.000 to ;q=1.000
                ;\s*q\s*=\s*
                (1(?:\.0{0,3})?|0(?:\.\d{0,3})?)?
            )?
        /x',
        $acceptLang,
        $matches,
        PREG_SET_ORDER
    )) {
        return [];
    }
    $langs = [];
    foreach ($matches as $match) {
        $languageCode = $match[1];
        $qValue = (float)($match[2] ?? 1.0);
        if ($qValue) {
            $langs[$languageCode] = $qValue;
        }
    }
    arsort($langs, SORT_NUMERIC);
    $out = [];
    foreach ($langs as $code => $q) {
        $out[] = [bin2hex((string)$code), $q];
    }
    return $out;
}

header('Content-Type: application/json');
header('Cache-Control: no-store');
echo json_encode([
    'get' => wikiedge_pairs($_GET),
    'post' => wikiedge_pairs($_POST),
    'cookie' => wikiedge_pairs($_COOKIE),
    'query' => bin2hex($_SERVER['QUERY_STRING'] ?? ''),
    'cookieHeader' => isset($_SERVER['HTTP_COOKIE']) ? bin2hex($_SERVER['HTTP_COOKIE']) : null,
    'acceptLang' => wikiedge_accept_lang($_SERVER['HTTP_ACCEPT_LANGUAGE'] ?? ''),
]);
