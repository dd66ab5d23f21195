// Preloaded by tests with `node -r`: when the process exits, writes one line to stderr naming the
// npm packages it loaded (CommonJS loader: packages imported as ES modules that are CommonJS
// inside, such as yaml and pino, pass through it too) and the built-in modules it compiled.
process.on('exit', () => {
  const packages = new Set();
  for (const file of Object.keys(require.cache)) {
    const m = file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
    if (m) packages.add(m[1]);
  }
  const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
  process.stderr.write(`loaded-modules: ${JSON.stringify({ packages: [...packages].sort(), builtins })}\n`);
});
