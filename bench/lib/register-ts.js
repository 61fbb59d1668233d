// @ts-check
'use strict';
/**
 * `node -r ./bench/lib/register-ts.js entry.ts`: compiles TypeScript on require as `tsc` would
 * for `npm start` (the repository's tsconfig.json, CommonJS), one file at a time with
 * ts.transpileModule, from the TypeScript 6.0 API (`typescript-6`: TypeScript 7, the `tsc` of
 * this repository, ships no JavaScript API; see scripts/typescript-api.js). Types are not checked
 * here; `tsc --noEmit` does that.
 */
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript-6');

const root = path.resolve(__dirname, '..', '..');
const read = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
const { options } = ts.parseJsonConfigFileContent(read.config, ts.sys, root);
/** @type {import('typescript').CompilerOptions} */
const compilerOptions = {
  ...options,
  module: ts.ModuleKind.CommonJS,
  noEmit: false,
  declaration: false,
  sourceMap: false,
  // Stack traces point into the .ts files (run node with --enable-source-maps).
  inlineSourceMap: true,
  inlineSources: false,
};

require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename });
  /** @type {{ _compile(code: string, filename: string): void }} */ (/** @type {unknown} */ (module))._compile(
    outputText,
    filename,
  );
};
