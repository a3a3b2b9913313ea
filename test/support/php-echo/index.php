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

header('Content-Type: application/json');
header('Cache-Control: no-store');
echo json_encode([
    'get' => wikiedge_pairs($_GET),
    'post' => wikiedge_pairs($_POST),
    'cookie' => wikiedge_pairs($_COOKIE),
    'query' => bin2hex($_SERVER['QUERY_STRING'] ?? ''),
    'cookieHeader' => isset($_SERVER['HTTP_COOKIE']) ? bin2hex($_SERVER['HTTP_COOKIE']) : null,
]);
