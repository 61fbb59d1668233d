/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    // jose 6 ships ES modules only. Node 24 loads it from our CommonJS through require(esm),
    // but jest's module runtime is its own CommonJS loader without that, so jose's files are
    // compiled to CommonJS for the tests (and only jose's: the rest of node_modules stays as is).
    '/node_modules/jose/.+\\.js$': [
      'ts-jest',
      { diagnostics: false, tsconfig: { allowJs: true, module: 'commonjs', target: 'es2022' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  // Each test file gets its own database and queue prefix, so files run in parallel safely.
  maxWorkers: process.env.JEST_WORKERS ?? 2,
  testTimeout: 30_000,
  slowTestThreshold: 15,
};
