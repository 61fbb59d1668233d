import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { listenAndAnnounce } from './announce';
import { HEALTH_BODY, HEALTH_ETAG, SECURITY_HEADERS } from './health-bytes';

/**
 * The floor for GET /health: no framework, but the same status line, headers and body
 * as the service, so both put the same bytes on the wire.
 */
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    res.writeHead(200, {
      'X-Request-Id': randomUUID(),
      ...SECURITY_HEADERS,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': HEALTH_BODY.length,
      ETag: HEALTH_ETAG,
    });
    res.end(HEALTH_BODY);
  } else {
    res.writeHead(404).end();
  }
});

listenAndAnnounce(server);
