import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Renovate ignores a key it does not know only with a warning in its own log, so a typo
 * would silently turn a rule off. The keys and values below are the documented ones
 * (docs.renovatebot.com/configuration-options) that this file may use.
 */
const TOP_LEVEL = new Set([
  '$schema',
  'description',
  'extends',
  'rangeStrategy',
  'separateMajorMinor',
  'separateMultipleMajor',
  'timezone',
  'schedule',
  'lockFileMaintenance',
  'packageRules',
]);
const RULE_KEYS = new Set([
  'description',
  'matchManagers',
  'matchUpdateTypes',
  'matchPackageNames',
  'groupName',
  'labels',
  'allowedVersions',
]);
const UPDATE_TYPES = new Set(['major', 'minor', 'patch', 'pin', 'digest', 'lockFileMaintenance', 'rollback', 'bump']);
const MANAGERS = new Set(['npm', 'dockerfile', 'docker-compose', 'nvm', 'nodenv']);

interface Rule {
  matchManagers?: string[];
  matchUpdateTypes?: string[];
  matchPackageNames?: string[];
  groupName?: string;
}
const config = JSON.parse(readFileSync(join(__dirname, '../../renovate.json'), 'utf8')) as {
  extends: string[];
  rangeStrategy: string;
  separateMajorMinor: boolean;
  schedule: string[];
  lockFileMaintenance: { enabled: boolean; schedule: string[] };
  packageRules: Rule[];
} & Record<string, unknown>;

describe('renovate.json', () => {
  test('when Renovate reads it, then every key is a documented option', () => {
    expect(Object.keys(config).filter((k) => !TOP_LEVEL.has(k))).toEqual([]);
    for (const rule of config.packageRules) {
      expect(Object.keys(rule).filter((k) => !RULE_KEYS.has(k))).toEqual([]);
      for (const t of rule.matchUpdateTypes ?? []) expect(UPDATE_TYPES).toContain(t);
      for (const m of rule.matchManagers ?? []) expect(MANAGERS).toContain(m);
    }
    expect(config.$schema).toBe('https://docs.renovatebot.com/renovate-schema.json');
  });

  test('when versions move, then they stay pinned exactly', () => {
    expect(config.rangeStrategy).toBe('pin');
  });

  test('when updates are grouped, then each ecosystem has one non-major group and no group takes a major', () => {
    const grouped = config.packageRules.filter((r) => r.groupName !== undefined);
    for (const manager of ['npm', 'dockerfile']) {
      expect(grouped.filter((r) => r.matchManagers?.includes(manager))).toHaveLength(1);
    }
    for (const rule of grouped) {
      expect(rule.matchUpdateTypes?.length).toBeGreaterThan(0);
      expect(rule.matchUpdateTypes).not.toContain('major');
    }
    expect(config.separateMajorMinor).toBe(true);
  });

  test('when a week passes, then the lockfile is refreshed once', () => {
    expect(config.lockFileMaintenance.enabled).toBe(true);
    expect(config.lockFileMaintenance.schedule).toEqual([
      expect.stringMatching(/ on (monday|tuesday|wednesday|thursday|friday|saturday|sunday)$/),
    ]);
  });

  test('when TypeScript 6.1 appears, then the API alias the lint tools load stays below it, since typescript-eslint supports TypeScript below 6.1', () => {
    expect(config.packageRules).toContainEqual(
      expect.objectContaining({ matchPackageNames: ['typescript-6'], allowedVersions: '<6.1' }),
    );
  });
});

describe('npm run deps:check', () => {
  const { collect, table } = require('../../scripts/deps-check.js') as {
    collect: (outdated: object, audit: object) => Array<Record<string, string>>;
    table: (rows: Array<Record<string, string>>) => string;
  };

  test('when a package is behind and another has an advisory, then both are rows of one table', () => {
    const rows = collect(
      {
        pino: { current: '9.14.0', wanted: '9.14.0', latest: '10.4.0' },
        undici: { current: '8.12.4', wanted: '8.12.4', latest: '8.13.1' },
      },
      {
        vulnerabilities: {
          undici: { severity: 'moderate', isDirect: true, fixAvailable: true },
          'brace-expansion': { severity: 'low', isDirect: false, fixAvailable: false },
        },
      },
    );
    expect(rows.map((r) => [r.name, r.behind, r.advisory])).toEqual([
      ['brace-expansion', '', 'low (indirect)'],
      ['pino', 'major', ''],
      ['undici', 'minor/patch', 'moderate, fix available'],
    ]);
    const lines = table(rows).split('\n');
    expect(lines[0]).toMatch(/^package\s+current\s+wanted\s+latest\s+behind\s+advisory$/);
    expect(lines).toHaveLength(4);
  });
});
