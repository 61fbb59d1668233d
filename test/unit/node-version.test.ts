import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The project runs on one Node.js line, pinned in four places that must agree: .nvmrc (nvm),
 * package.json "engines" (what scripts/check-node.js enforces), scripts/use-node.sh (what CI
 * and scripts/npm fetch) and the Dockerfile's base image. Under another Node.js every npm
 * script and src/main.ts stop with one line naming the fix, before a native addon can crash.
 */
const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const manifest = JSON.parse(read('package.json')) as { engines: { node: string }; scripts: Record<string, string> };
const { nodeVersionProblem } = require('../../scripts/check-node.js') as {
  nodeVersionProblem: (version: string, range: string) => string | null;
};

test('when .nvmrc, engines, scripts/use-node.sh and the Dockerfile are read, then they name the same Node.js', () => {
  const nvmrc = read('.nvmrc').trim();
  const pinned = /^NODE_LTS_VERSION=(\S+)$/m.exec(read('scripts/use-node.sh'))?.[1];
  const image = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-/m.exec(read('Dockerfile'))?.[1];
  expect({ engines: manifest.engines.node, pinned, image }).toEqual({ engines: `^${nvmrc}`, pinned: nvmrc, image: nvmrc });
  expect(nodeVersionProblem(nvmrc, manifest.engines.node)).toBeNull();
  expect(nodeVersionProblem(process.versions.node, manifest.engines.node)).toBeNull();
});

test('when another Node.js line or an older release of ours runs, then the check refuses it in one line naming the fix', () => {
  const range = manifest.engines.node;
  const [major, minor, patch] = range.slice(1).split('.').map(Number) as [number, number, number];
  expect(nodeVersionProblem(`${major}.${minor}.${patch + 1}`, range)).toBeNull();
  expect(nodeVersionProblem(`${major}.${minor + 1}.0`, range)).toBeNull();
  for (const version of ['20.20.2', `${major + 1}.0.0`, `${major}.${minor - 1}.9`])
    expect(nodeVersionProblem(version, range)).toBe(
      `Node ${version} found; this project runs on Node ${major} (${major}.${minor}.${patch} or a later ${major}.x): ` +
        'run `source scripts/use-node.sh` first, or use the wrapper: scripts/npm start',
    );
});

test('when any npm script runs, then it checks the Node.js version first', () => {
  for (const [name, command] of Object.entries(manifest.scripts))
    expect({ name, first: command.split(' && ')[0] }).toEqual({ name, first: 'node scripts/check-node.js' });
});

/** Every other Node.js on this machine's PATH and at the system path (Debian's Node 20 here). */
function otherNodes(): string[] {
  const found = spawnSync('which', ['-a', 'node'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  const candidates = [...new Set([...found, '/usr/bin/node'])];
  return candidates.filter((path) => {
    try {
      return execFileSync(path, ['--version'], { encoding: 'utf8' }).trim() !== process.version;
    } catch {
      return false;
    }
  });
}

const others = otherNodes();
const onOtherNode = others.length > 0 ? test : test.skip;

onOtherNode('when the machine’s own Node.js runs the check or the service, then each exits 1 with the one-line fix', () => {
  for (const node of others) {
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim().slice(1);
    // src/main.ts as `node dist/main.js` runs it: the check is its first statement, so argon2 never loads.
    for (const args of [['scripts/check-node.js'], ['--import', 'tsx', 'src/main.ts']]) {
      const run = spawnSync(node, args, { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 });
      expect({ node, args, status: run.status, stdout: run.stdout }).toEqual({ node, args, status: 1, stdout: '' });
      expect(run.stderr).toMatch(
        new RegExp(`^Node ${version.replace(/\./g, '\\.')} found; [^\\n]*scripts/use-node\\.sh[^\\n]*\\n$`),
      );
    }
  }
});

onOtherNode('when the machine’s own npm runs an npm script, then it stops at the check with the one-line fix', () => {
  for (const node of others.filter((n) => existsSync(join(dirname(n), 'npm')))) {
    const run = spawnSync(join(dirname(node), 'npm'), ['run', '--silent', 'build'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { PATH: `${dirname(node)}:/usr/bin:/bin`, HOME: process.env.HOME ?? '' },
      timeout: 60_000,
    });
    expect({ node, status: run.status }).toEqual({ node, status: 1 });
    expect(run.stderr).toMatch(/^Node \S+ found; this project runs on Node \d+ [^\n]*scripts\/use-node\.sh/m);
  }
});

test('when scripts/npm runs in a shell that has only the machine’s PATH, then npm runs on the pinned Node.js', () => {
  const cache = ['HOME', 'XDG_CACHE_HOME', 'NODE_CACHE_DIR'].filter((k) => process.env[k] !== undefined);
  const run = spawnSync(join(ROOT, 'scripts', 'npm'), ['exec', '--', 'node', '--version'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', ...Object.fromEntries(cache.map((k) => [k, process.env[k]!])) },
    timeout: 120_000,
  });
  expect({ status: run.status, version: run.stdout.trim().split('\n').pop() }).toEqual({
    status: 0,
    version: `v${read('.nvmrc').trim()}`,
  });
});
