// @ts-check
// Before typescript-eslint loads: it parses with TypeScript's JavaScript API, which TypeScript 7
// does not ship (scripts/typescript-api.js).
require('./scripts/typescript-api.js');
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');
const importX = require('eslint-plugin-import-x');

module.exports = tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', 'generated/**', 'src/db/migrations/Migration*.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { require: 'readonly', module: 'writable', process: 'readonly', __dirname: 'readonly', console: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-require-imports': 'off',
      'no-console': ['error', { allow: ['error'] }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // The API and the workers never import each other; shared code lives in src/domain.
    files: ['src/api/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/workers', '**/workers/**'], message: 'The API tier must not import the worker tier.' }] },
      ],
    },
  },
  {
    files: ['src/workers/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/api', '**/api/**'], message: 'The worker tier must not import the API tier.' }] },
      ],
    },
  },
  {
    files: ['src/jobs/**/*.ts', 'src/entities/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/api', '**/api/**', '**/workers', '**/workers/**'], message: 'Shared code must not import a tier.' },
          ],
        },
      ],
    },
  },
  {
    // The domain sits below the tiers and the composition root: it is handed what it needs
    // (config values as typed options, the consumer list from src/policy.ts).
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/api', '**/api/**', '**/workers', '**/workers/**'], message: 'Shared code must not import a tier.' },
            {
              group: ['**/config/**', '**/runtime', '**/main', '**/app-services', '**/policy'],
              message:
                'The domain must not import the configuration or the composition root: take the values it needs as options.',
            },
          ],
        },
      ],
    },
  },
  {
    // Platform code (decimals, errors, money text, the caller's type) is the floor every area
    // stands on, so it imports nothing of the service: only libraries and itself.
    files: ['src/platform/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./',
              message: 'Platform code imports nothing outside src/platform (only libraries and itself).',
            },
          ],
        },
      ],
    },
  },
  {
    // No import cycles in the domain: an area that needs another's code imports it one way only.
    files: ['src/domain/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.js', '.json', '.node'] })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'scripts/**/*.js'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-console': 'off' },
  },
);
