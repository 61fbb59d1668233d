/**
 * What a `manage_queues` holder may change through the queue dashboard: retry, promote, clean and remove jobs, nothing else. bull-board's other state changes
 * (adding or duplicating a job, editing a job's data, delay or priority, pausing a queue,
 * its concurrency, rate limit or schedulers, obliterating it) are refused whatever the UI
 * shows: an added price tick or an edited payload is a trade the desk never made. For the
 * same reason a retry is of failed jobs only: "retrying" a completed job runs it again.
 *
 * Paths are relative to the dashboard, as bull-board's routes declare them (the same routes
 * in @bull-board/api's routes.js). Anchored, one segment per parameter, so no refused route
 * can be reached under an allowed shape.
 */
const ALLOWED_CHANGES: ReadonlyArray<{ method: string; path: RegExp; audit: string; failedJobOnly?: true }> = [
  { method: 'PUT', path: /^\/api\/queues\/[^/]+\/retry\/failed$/, audit: 'queue.jobs.retried' },
  { method: 'PUT', path: /^\/api\/queues\/[^/]+\/promote$/, audit: 'queue.jobs.promoted' },
  { method: 'PUT', path: /^\/api\/queues\/[^/]+\/clean\/[^/]+$/, audit: 'queue.cleaned' },
  { method: 'PUT', path: /^\/api\/queues\/[^/]+\/empty$/, audit: 'queue.jobs.removed' },
  { method: 'PUT', path: /^\/api\/queues\/([^/]+)\/([^/]+)\/retry$/, audit: 'queue.jobs.retried', failedJobOnly: true },
  { method: 'PUT', path: /^\/api\/queues\/[^/]+\/[^/]+\/promote$/, audit: 'queue.jobs.promoted' },
  // bull-board's "clean" of one job removes it.
  { method: 'PUT', path: /^\/api\/queues\/[^/]+\/[^/]+\/clean$/, audit: 'queue.jobs.removed' },
  { method: 'PUT', path: /^\/api\/queues\/[^/]+\/[^/]+\/remove-unprocessed-children$/, audit: 'queue.jobs.removed' },
];

export interface AllowedChange {
  audit: string;
  /** The job a retry names: the change stands only if that job has failed. */
  failedJob?: { queue: string; id: string };
}

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The allowed change a request is, or undefined when it is refused. */
export function allowedChange(method: string, path: string): AllowedChange | undefined {
  for (const change of ALLOWED_CHANGES) {
    const match = change.method === method ? change.path.exec(path) : null;
    if (!match) continue;
    if (!change.failedJobOnly) return { audit: change.audit };
    const [queue, id] = [decoded(match[1]!), decoded(match[2]!)];
    return queue === undefined || id === undefined ? undefined : { audit: change.audit, failedJob: { queue, id } };
  }
  return undefined;
}

/**
 * The dashboard's controls for refused changes, hidden. bull-board 9 has no option per action
 * (its `readOnlyMode` would hide retry, promote and clean too), so a stylesheet hides the
 * buttons and menu entries by their icons; the server's refusal above is what holds.
 */
export const HIDDEN_CONTROLS_CSS = [
  // Job actions: update data (pencil), duplicate (files), reschedule (clock), reprioritise (arrow-up-down).
  ...['pencil', 'files', 'clock', 'arrow-up-down'].map((icon) => `li:has(> * svg.lucide-${icon})`),
  // Queue menu: add job (plus), pause and resume, concurrency, rate limit (gauge), obliterate (ban).
  ...['plus', 'pause', 'play', 'chart-no-axes-gantt', 'gauge', 'ban'].map((icon) => `[role="menuitem"]:has(svg.lucide-${icon})`),
]
  .map((selector) => `${selector} { display: none !important; }`)
  .join('\n');
