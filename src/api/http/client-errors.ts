import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Requests Node refuses before express sees them (a malformed request line or header,
 * headers over the size limit, a client too slow to send them) get Node's bare status
 * line. This answers them in the API's error format instead, as far as
 * Node allows: written straight to the socket, which is then closed.
 */
const ANSWERS: Record<string, { status: number; reason: string; code: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    code: 'HEADERS_TOO_LARGE',
    detail: 'The request headers are too large',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: 'Request Timeout',
    code: 'REQUEST_TIMEOUT',
    detail: 'The request was not received in time',
  },
};
const MALFORMED = { status: 400, reason: 'Bad Request', code: 'BAD_REQUEST', detail: 'The request is not valid HTTP' };

export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // Node's own rule: nothing can be written once a response on this socket has begun.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const answer = ANSWERS[err.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify({ detail: answer.detail, code: answer.code });
    socket.end(
      `HTTP/1.1 ${answer.status} ${answer.reason}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
