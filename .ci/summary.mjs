// Prints the closing `N passed, N failed` line from vitest's JSON report and sets the exit code:
// non-zero when the test command failed, any test failed, or no test ran.
import { existsSync, readFileSync } from 'node:fs';

const [reportPath, statusText] = process.argv.slice(2);
const commandStatus = Number(statusText ?? 1);
let passed = 0;
let failed = 0;
let total = 0;
if (reportPath && existsSync(reportPath)) {
  const report = JSON.parse(readFileSync(reportPath, 'utf8'));
  passed = report.numPassedTests ?? 0;
  failed = report.numFailedTests ?? 0;
  total = report.numTotalTests ?? 0;
  const failedSuites = (report.testResults ?? []).filter(
    (r) => r.status === 'failed' && r.assertionResults?.length === 0,
  );
  for (const suite of failedSuites) {
    console.log(`suite failed to run: ${suite.name}: ${(suite.message ?? '').split('\n')[0]}`);
    failed += 1;
  }
} else {
  console.log(`no test report at ${reportPath}: the test command failed before vitest reported`);
}
if (total === 0) console.log('no tests ran');
console.log(`${passed} passed, ${failed} failed`);
process.exit(commandStatus !== 0 || failed > 0 || total === 0 ? 1 : 0);
