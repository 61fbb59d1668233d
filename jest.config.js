/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  // Each test file gets its own database and queue prefix, so files run in parallel safely.
  maxWorkers: process.env.JEST_WORKERS ?? 2,
  testTimeout: 30_000,
  slowTestThreshold: 15,
};
