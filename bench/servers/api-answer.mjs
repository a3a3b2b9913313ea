// The api.php answer every hit-path candidate serves: ~300 bytes with the headers MediaWiki
// sends for a public answer, so every cache under test keeps it. Also the header set the
// memory bench stores per entry.
export const body = Buffer.from(JSON.stringify({ batchcomplete: '', query: { filearchive: [] }, _pad: 'x'.repeat(220) }));
export const headers = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 's-maxage=3600, max-age=3600, public',
  vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-disposition': 'inline; filename=api-result.json',
};
