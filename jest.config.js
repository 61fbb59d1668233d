// Packages that ship ES modules only. Node 24 loads them from our CommonJS through
// require(esm), but jest's module runtime is its own CommonJS loader without that, so their
// files (and only theirs: the rest of node_modules stays as is) are compiled to CommonJS
// for the tests. jose directly; @scure/base and @noble/hashes under otplib; MikroORM and
// kysely, its query runner; parse5 and entities, its character references.
const ESM_ONLY = ['jose', '@scure/base', '@noble/hashes', '@mikro-orm', 'kysely', 'parse5', 'entities'].map((name) =>
  name.replace('/', '\\/'),
);

// Tests are compiled file by file with SWC, types stripped and never checked: `tsc --noEmit`
// (TypeScript 7) checks them, as a step of its own. Legacy decorators as tsconfig.json has them
// (experimentalDecorators); no decorator metadata, which MikroORM is not given to read.
const SWC_TYPESCRIPT = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: false },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

// The timing lane (scripts/test.sh): tests that measure the event loop of the service in their
// own process. `npm test` runs them after the rest, one at a time in a fresh worker;
// JEST_LANE=timing runs only them, JEST_LANE=all (a path given to npm test) everything.
const TIMING_TESTS = ['compliance/document-transfers.test.ts', 'mail/template-limits.test.ts'];
const lane = process.env.JEST_LANE;

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: lane === 'timing' ? TIMING_TESTS.map((t) => `**/integration/${t}`) : ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...(lane ? [] : TIMING_TESTS.map((t) => `/integration/${t.replace('.', '\\.')}$`))],
  transform: {
    '^.+\\.ts$': ['@swc/jest', SWC_TYPESCRIPT],
    [`/node_modules/(${ESM_ONLY.join('|')})/.+\\.js$`]: '<rootDir>/test/helpers/esm-package-transform.js',
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  // Each test file gets its own database and queue prefix, so files run in parallel safely.
  maxWorkers: process.env.JEST_WORKERS ?? 2,
  testTimeout: 30_000,
  slowTestThreshold: 15,
};
