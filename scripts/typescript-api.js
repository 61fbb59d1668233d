// @ts-check
'use strict';
/**
 * `typescript` is TypeScript 7, the native compiler: `tsc` type-checks and builds. It ships no
 * JavaScript compiler API, and the tools that parse TypeScript through that API
 * (typescript-eslint's parser and rules, openapi-typescript's printer) support TypeScript
 * below 6.1 only. They get the 6.0 API from `typescript-6`, an npm alias of typescript@6.0.x
 * kept for them alone: loaded first (`require` in eslint.config.js, `node --require` for
 * openapi-typescript), this hook resolves their `typescript` to it, for require and import
 * alike. Drop the alias and this file once typescript-eslint supports TypeScript 7.
 */
const { registerHooks } = require('node:module');

registerHooks({
  resolve(specifier, context, nextResolve) {
    return nextResolve(specifier === 'typescript' ? 'typescript-6' : specifier, context);
  },
});
