// Preloaded into the gateway (`node --import bench/no-store-gzip.mjs dist/main.js`) by the
// miss-throughput section to measure a miss without compression at store: no configuration key
// turns it off (src/config/fields.ts has only WIKIEDGE_BROTLI_AFTER_HITS, for br). src/http/codings.ts
// storedForm keeps an answer as it is when gzip saves less than a tenth; this makes gzipSync
// return its input unchanged, at no cost, so every answer is stored identity, as one that gzip
// cannot shrink would be. A client that asks for gzip is sent that identity entry as it is
// (src/steps/deliver.ts representationOf: an identity stored form goes as identity). An answer
// gzipped for one client and not stored (Representations.answerBytes) would go out as identity
// bytes labelled gzip; the miss-throughput section asks for none (every answer it gets is stored).
import { syncBuiltinESMExports } from 'node:module';
import zlib from 'node:zlib';

zlib.gzipSync = (input) => Buffer.from(input.buffer, input.byteOffset, input.byteLength);
syncBuiltinESMExports();
