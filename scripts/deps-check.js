// `npm run deps:check`: npm outdated and npm audit as one table, one row per package that
// is behind or has an advisory. It reports and never fails: both npm commands exit
// non-zero when they find something, which is information here, not a broken build.
const { spawnSync } = require('node:child_process');

/** Runs an npm command that answers in JSON; its exit status only says whether it found something. */
function npmJson(args) {
  const run = spawnSync('npm', [...args, '--json'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  try {
    return JSON.parse(run.stdout || '{}');
  } catch {
    console.warn(`npm ${args.join(' ')} gave no JSON: ${(run.stderr || '').trim().split('\n')[0] ?? ''}`);
    return {};
  }
}

function major(version) {
  return Number.parseInt(String(version ?? '').split('.')[0] ?? '', 10);
}

/** The rows of the table, keyed by package name. */
function collect(outdated, audit) {
  const rows = new Map();
  const row = (name) => {
    if (!rows.has(name)) rows.set(name, { name, current: '', wanted: '', latest: '', behind: '', advisory: '' });
    return rows.get(name);
  };
  for (const [name, info] of Object.entries(outdated)) {
    const r = row(name);
    r.current = info.current ?? 'missing';
    r.wanted = info.wanted ?? '';
    r.latest = info.latest ?? '';
    r.behind = major(r.latest) > major(r.current) ? 'major' : 'minor/patch';
  }
  for (const [name, info] of Object.entries(audit.vulnerabilities ?? {})) {
    const r = row(name);
    r.advisory = `${info.severity}${info.isDirect ? '' : ' (indirect)'}${info.fixAvailable ? ', fix available' : ''}`;
  }
  return [...rows.values()].sort((a, b) => a.name.localeCompare(b.name));
}

function table(rows) {
  const head = {
    name: 'package',
    current: 'current',
    wanted: 'wanted',
    latest: 'latest',
    behind: 'behind',
    advisory: 'advisory',
  };
  const columns = Object.keys(head);
  const width = Object.fromEntries(columns.map((c) => [c, Math.max(...[head, ...rows].map((r) => String(r[c]).length))]));
  return [head, ...rows]
    .map((r) =>
      columns
        .map((c) => String(r[c]).padEnd(width[c]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

if (require.main === module) {
  const rows = collect(npmJson(['outdated']), npmJson(['audit']));
  console.log(rows.length === 0 ? 'Every package is current and no advisory applies.' : table(rows));
}

module.exports = { collect, table };
