// Stops at once, with one line saying how to get the right Node.js, when the one running is
// not what package.json's "engines" names. Every npm script runs it first, and src/main.ts
// requires it before anything else: a native addon (argon2) built for one Node.js crashes
// another with a bare "Segmentation fault" and no word of why. Plain JavaScript without
// dependencies or recent syntax, so that it runs on whatever Node.js the machine has.
'use strict';

const fs = require('fs');
const path = require('path');

/** "^24.21.0" (the one form package.json uses; a unit test holds it to it) as numbers. */
function parseCaret(range) {
  const m = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(String(range || '').trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : null;
}

/** Why `version` (as process.versions.node) cannot run this project under `range`, or null. */
function nodeVersionProblem(version, range) {
  const want = parseCaret(range);
  if (!want) return 'package.json "engines.node" must read ^MAJOR.MINOR.PATCH (it reads ' + JSON.stringify(range) + ')';
  const have = String(version).split('.').map(Number);
  const fits = have[0] === want.major && (have[1] > want.minor || (have[1] === want.minor && have[2] >= want.patch));
  if (fits) return null;
  const pinned = want.major + '.' + want.minor + '.' + want.patch;
  return (
    'Node ' +
    version +
    ' found; this project runs on Node ' +
    want.major +
    ' (' +
    pinned +
    ' or a later ' +
    want.major +
    '.x): run `source scripts/use-node.sh` first, or use the wrapper: scripts/npm start'
  );
}

/** The project's package.json: beside scripts/, in a checkout and in the image alike. */
function engineRange() {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  return (manifest.engines || {}).node;
}

const problem = nodeVersionProblem(process.versions.node, engineRange());
if (problem) {
  process.stderr.write(problem + '\n');
  process.exit(1);
}

module.exports = { nodeVersionProblem: nodeVersionProblem, parseCaret: parseCaret };
