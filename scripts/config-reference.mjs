// The configuration reference (docs/CONFIGURATION.md), generated from the table of keys (src/config/fields.ts).
//
//   npm run build && node scripts/config-reference.mjs          prints the table's rows
//   npm run build && node scripts/config-reference.mjs --write  rewrites the table in docs/CONFIGURATION.md
//
// Reads the built dist/ (plain node, no TypeScript loader); test/unit/readme-config-reference.test.ts
// fails while docs/CONFIGURATION.md's table differs from what this prints.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
let renderConfigReference;
try {
  ({ renderConfigReference } = await import(path.join(root, 'dist/config/config.js')));
} catch (err) {
  console.error(`scripts/config-reference.mjs: cannot load dist/config/config.js (run npm run build first): ${err.message}`);
  process.exit(1);
}
const table = renderConfigReference();

if (!process.argv.includes('--write')) {
  process.stdout.write(table);
  process.exit(0);
}

// The table is the block of lines starting at its header row, up to the first line that is not a row.
const readmePath = path.join(root, 'docs/CONFIGURATION.md');
const lines = readFileSync(readmePath, 'utf8').split('\n');
const start = lines.indexOf(table.split('\n')[0]);
if (start < 0) {
  console.error('scripts/config-reference.mjs: docs/CONFIGURATION.md has no "| key | default | meaning |" table');
  process.exit(1);
}
let end = start;
while (end < lines.length && lines[end].startsWith('|')) end++;
lines.splice(start, end - start, ...table.trimEnd().split('\n'));
writeFileSync(readmePath, lines.join('\n'));
console.log(`docs/CONFIGURATION.md: configuration reference rewritten (${end - start} lines replaced)`);
