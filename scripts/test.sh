#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: unit tests, kernel tests in fresh network
# namespaces, the native addon's tests and its fuzzing. Run as root: kernel tests fail (they never
# skip) without the privileges to create namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The node and npm setup chose (its own install first on PATH, when it made one).
. scripts/node-env.sh
echo "test: Node.js $(node --version) ($(command -v node))"
mkdir -p build
status=0
npm run typecheck
# Imports between the folders of src/ go one way (no cycle, allowed directions, library entries);
# every relative link in README.md and docs/ resolves.
node scripts/check-imports.mjs
node scripts/check-links.mjs
npx vitest run --reporter=default --reporter=json --outputFile.json=build/test-results.json || status=$?
# One closing line in the form every CI reader understands.
node -e '
  const r = JSON.parse(require("fs").readFileSync("build/test-results.json", "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  // A file that fails outside its tests (a beforeAll that throws) counts no failed test: say so.
  // (numFailedTestSuites counts describe blocks too; testResults holds one entry per file.)
  const failedFiles = r.testResults.filter((f) => f.status === "failed").length;
  const files = failedFiles ? `, ${failedFiles} test file(s) failed` : "";
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : "") + files);
' || status=1
exit "$status"
