// npm records an optional platform package in the lockfile only when the registry serves it
// (npm/cli#4828); the registry this project installs from lacks some msgpackr-extract
// platform builds, and `npm ci` then rejects the lockfile as out of sync. This adds a
// version/os/cpu record for each such package: npm skips it on every other platform, and
// msgpackr falls back to plain JavaScript where no native build exists.
// Run after `npm install`: `node scripts/complete-lockfile.js`.
const fs = require('node:fs');

const PLATFORM = /-(darwin|linux|win32|freebsd)-(arm64|x64|arm|ia32)$/;
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path ? `${path}/` : ''}node_modules/${name}`;
    const top = `node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[top]) continue;
    const platform = PLATFORM.exec(name);
    if (!platform) throw new Error(`missing optional dependency ${name}@${version} is not a platform build`);
    lock.packages[top] = { version, cpu: [platform[2]], optional: true, os: [platform[1]] };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
fs.writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} lockfile records`);
