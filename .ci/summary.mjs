// Prints the closing `N passed, N failed` line from vitest's JSON reports and sets the exit code:
// non-zero when a test command failed, any test failed, or no test ran. Arguments come in pairs,
// `<report.json> <exit status>`: the main suite, the package checks (scripts/check-packages.mjs
// writes the same shape, one test per package and check), then the interop suite.
import { existsSync, readFileSync } from 'node:fs';

const args = process.argv.slice(2);
let passed = 0;
let failed = 0;
let total = 0;
let commandFailed = false;
for (let i = 0; i < args.length; i += 2) {
  const reportPath = args[i];
  const commandStatus = Number(args[i + 1] ?? 1);
  if (commandStatus !== 0) commandFailed = true;
  if (reportPath && existsSync(reportPath)) {
    const report = JSON.parse(readFileSync(reportPath, 'utf8'));
    passed += report.numPassedTests ?? 0;
    failed += report.numFailedTests ?? 0;
    total += report.numTotalTests ?? 0;
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
}
if (total === 0) console.log('no tests ran');
console.log(`${passed} passed, ${failed} failed`);
process.exit(commandFailed || failed > 0 || total === 0 ? 1 : 0);
