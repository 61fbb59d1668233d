// Jest transformer for the ES-module-only packages under node_modules (jest.config.js): jest's
// module runtime is a CommonJS loader, so their files are compiled to CommonJS, and the one
// construct that has no CommonJS form is rewritten first. MikroORM resolves optional packages
// with `import.meta.resolve`, which answers a file URL: `require.resolve` made into the same
// URL answers what it would.
const { createTransformer } = require('@swc/jest');

const inner = createTransformer({
  jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' },
  module: { type: 'commonjs' },
});

const IMPORT_META_RESOLVE = /\bimport\.meta\.resolve\(/g;

function commonJsSource(source) {
  return source.replace(IMPORT_META_RESOLVE, "((id) => require('node:url').pathToFileURL(require.resolve(id)).href)(");
}

module.exports = {
  canInstrument: false,
  getCacheKey: (source, path, options) => inner.getCacheKey(commonJsSource(source), path, options),
  process: (source, path, options) => inner.process(commonJsSource(source), path, options),
};
