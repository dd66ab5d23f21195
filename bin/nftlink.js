#!/usr/bin/env node
// The CLI entry: runs the compiled TypeScript (npm run build). Exit codes: 0 ok, 1 failure, 2 usage.
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
