// Print vitest's JSON report as one closing line: "N passed, N failed, N skipped".
import { readFileSync } from 'node:fs';

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
// Vitest fails a run whose tests all passed when an error escaped them (its "Unhandled Errors"
// section: an uncaught exception or rejection in a test file or in the code under test). The
// report says so only through `success`; the count above would hide it.
if (report.success === false && failed === 0)
  console.log('the run failed although every test passed: vitest reported an error outside the tests (its "Unhandled Errors" section above)');
