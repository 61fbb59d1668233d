import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { listenAndAnnounce } from './announce';

/**
 * The floor for GET /health: no framework, but the same status line, headers and body
 * as the service, so both put the same bytes on the wire.
 */
const BODY = Buffer.from(JSON.stringify({ status: 'ok' }));
// Express sends a weak ETag of the body; the body never changes, so neither does the tag.
const ETAG = 'W/"f-VaSQ4oDUiZblZNAEkkN+sX+q3Sg"';

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    res.writeHead(200, {
      'X-Request-Id': randomUUID(),
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': BODY.length,
      ETag: ETAG,
    });
    res.end(BODY);
  } else {
    res.writeHead(404).end();
  }
});

listenAndAnnounce(server);
