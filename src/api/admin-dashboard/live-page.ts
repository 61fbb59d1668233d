import { EVENT_TYPES } from '../../domain/events/event-types';

/**
 * /admin/live: the back-office event stream as a live table. The page is static HTML; its
 * script (served from this origin, no inline script under the dashboard's CSP) asks
 * /admin/live/ticket for a single-use stream ticket with the dashboard cookie, then opens
 * /api/backoffice/stream with EventSource. On an error it opens a new stream with a fresh
 * ticket and `last_event_id`, so nothing is missed across a reconnect.
 */
export function livePage(): string {
  const options = EVENT_TYPES.map((t) => `<option value="${t}">${t}</option>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <title>Live events · Trading</title>
  <link rel="icon" type="image/svg+xml" href="/favicon.svg">
  <style>
    body { font-family: system-ui, sans-serif; background: #151a21; color: #e6e9ee; margin: 0; padding: 1rem 1.5rem; }
    header { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
    h1 { font-size: 1.2rem; margin: 0; }
    select { background: #1f2630; color: inherit; border: 1px solid #3a4452; border-radius: 4px; padding: 0.3rem; min-width: 14rem; }
    #status { font-size: 0.85rem; color: #9aa4b2; }
    a { color: #93c5fd; }
    table { border-collapse: collapse; width: 100%; margin-top: 1rem; font-size: 0.9rem; }
    th, td { text-align: left; padding: 0.35rem 0.6rem; border-bottom: 1px solid #2a3340; white-space: nowrap; }
    td.summary { white-space: normal; }
    th { color: #9aa4b2; font-weight: 600; }
  </style>
</head>
<body>
  <header>
    <h1>Live events</h1>
    <label>Types <select id="types" multiple size="1" title="No selection: every type">${options}</select></label>
    <span id="status" role="status">connecting…</span>
    <a href="/admin/queues">Queues</a> <a href="/admin/logout">Sign out</a>
  </header>
  <table>
    <thead><tr><th>Type</th><th>Time</th><th>Account</th><th>Summary</th></tr></thead>
    <tbody id="events"></tbody>
  </table>
  <script src="/admin/live.js"></script>
</body>
</html>`;
}

/** The page's script: plain browser JavaScript, no build step. */
export const LIVE_SCRIPT = `'use strict';
(function () {
  var TYPES = ${JSON.stringify(EVENT_TYPES)};
  var MAX_ROWS = 500;
  var body = document.getElementById('events');
  var status = document.getElementById('status');
  var select = document.getElementById('types');
  var source = null;
  var lastId = null;
  var generation = 0;

  function selected() {
    return Array.prototype.filter.call(select.options, function (o) { return o.selected; }).map(function (o) { return o.value; });
  }

  function account(data) {
    var keys = ['login', 'from_login', 'account_login', 'to_login'];
    for (var i = 0; i < keys.length; i++) if (data && data[keys[i]] !== undefined && data[keys[i]] !== null) return String(data[keys[i]]);
    return '';
  }

  function summary(data) {
    if (!data) return '';
    var keys = ['order', 'symbol', 'cmd', 'volume', 'open_price', 'close_price', 'profit', 'amount', 'currency', 'status', 'email', 'reason'];
    var parts = [];
    keys.forEach(function (k) { if (data[k] !== undefined && data[k] !== null && typeof data[k] !== 'object') parts.push(k + ' ' + data[k]); });
    return parts.join(' · ');
  }

  function cell(text, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    return td;
  }

  function onEvent(e) {
    lastId = e.lastEventId || lastId;
    var event = JSON.parse(e.data);
    var tr = document.createElement('tr');
    tr.dataset.type = event.type;
    tr.appendChild(cell(event.type));
    tr.appendChild(cell(new Date(event.created_at).toLocaleTimeString()));
    tr.appendChild(cell(account(event.data)));
    tr.appendChild(cell(summary(event.data), 'summary'));
    body.insertBefore(tr, body.firstChild);
    while (body.rows.length > MAX_ROWS) body.deleteRow(body.rows.length - 1);
  }

  function connect() {
    var mine = ++generation;
    if (source) source.close();
    source = null;
    status.textContent = 'connecting…';
    fetch('/admin/live/ticket', { method: 'POST', credentials: 'same-origin' })
      .then(function (r) {
        if (r.status === 401) { location.href = '/admin/login'; throw new Error('signed out'); }
        if (!r.ok) throw new Error('ticket ' + r.status);
        return r.json();
      })
      .then(function (t) {
        if (mine !== generation) return;
        var url = '/api/backoffice/stream?ticket=' + encodeURIComponent(t.ticket);
        var types = selected();
        if (types.length) url += '&types=' + encodeURIComponent(types.join(','));
        if (lastId) url += '&last_event_id=' + encodeURIComponent(lastId);
        source = new EventSource(url);
        source.onopen = function () { status.textContent = 'live'; };
        TYPES.forEach(function (type) { source.addEventListener(type, onEvent); });
        source.addEventListener('reset', function () { lastId = null; });
        // A ticket opens one stream: EventSource's own retry would reuse it, so reconnect with a fresh one.
        source.onerror = function () {
          if (mine !== generation) return;
          source.close();
          status.textContent = 'reconnecting…';
          setTimeout(function () { if (mine === generation) connect(); }, 1000);
        };
      })
      .catch(function (err) {
        status.textContent = 'error: ' + err.message;
        setTimeout(function () { if (mine === generation) connect(); }, 2000);
      });
  }

  select.addEventListener('change', function () {
    lastId = null;
    body.textContent = '';
    connect();
  });
  connect();
})();
`;
