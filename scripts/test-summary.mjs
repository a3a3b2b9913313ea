// Print vitest's JSON report as one closing line: "N passed, N failed, N skipped".
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const file = process.argv[2] ?? 'test-results.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('0 passed, 1 failed');
  console.error(`no test report at ${file}: the suite did not run to the end`);
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
// A suite that failed to load counts as a failure even when no single test did.
const failedSuites = report.numFailedTestSuites ?? 0;
const failed = (report.numFailedTests ?? 0) + (failedSuites > 0 && !report.numFailedTests ? 1 : 0);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
// Name each failure, so a reader who sees only the end of a CI log knows which test failed
// (the run of 69d5b35 on record printed "1 failed" and nothing else).
for (const suite of report.testResults ?? []) {
  const where = relative(process.cwd(), suite.name ?? '');
  const failures = (suite.assertionResults ?? []).filter((t) => t.status === 'failed');
  for (const t of failures) {
    const first = String(t.failureMessages?.[0] ?? '')
      .split('\n')[0]
      .slice(0, 300);
    console.log(`failed test: ${where} > ${t.fullName ?? t.title}${first ? ` (${first})` : ''}`);
  }
  if (failures.length === 0 && suite.status === 'failed')
    console.log(`failed file: ${where}${suite.message ? ` (${String(suite.message).split('\n')[0].slice(0, 300)})` : ''}`);
}
// Vitest fails a run whose tests all passed when an error escaped them (its "Unhandled Errors"
// section: an uncaught exception or rejection in a test file or in the code under test). The
// report says so only through `success`; the count above would hide it.
if (report.success === false && failed === 0)
  console.log('the run failed although every test passed: vitest reported an error outside the tests (its "Unhandled Errors" section above)');
