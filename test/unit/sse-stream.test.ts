import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { MAX_BEHIND, SseStream } from '../../src/api/streams/sse-stream';
import type { LiveEvent } from '../../src/domain/streams/live-feed';

/** A response whose socket takes the first frame and then pushes back until drained. */
class StuckResponse extends EventEmitter {
  written: string[] = [];
  ended: string | undefined;
  takes = 1;
  write(frame: string): boolean {
    this.written.push(frame);
    return --this.takes > 0;
  }
  end(frame?: string): void {
    this.ended = frame ?? '';
  }
  destroy(): void {}
}

/** An event written as `seq` and handed over as `published` (write order is not commit order). */
const event = (seq: number, published = seq): LiveEvent => ({
  seq: String(seq),
  published: String(published),
  id: `e${seq}`,
  type: 'order.opened',
  created_at: '2026-11-26T09:30:00.000Z',
  customer_id: 'c',
  data: { order: seq },
});

function streamOn(res: StuckResponse, resuming = false) {
  const ended: SseStream[] = [];
  const stream = new SseStream(
    'id',
    res as unknown as Response,
    'customer',
    { kind: 'customer', customerId: 'c', sessionId: 's' },
    { session: 'session:s', principal: 'customer:c' },
    { customerId: 'c' },
    () => undefined,
    (s) => ended.push(s),
    resuming,
  );
  return { stream, ended };
}

test('when a client stops reading, then at most MAX_BEHIND frames wait and the stream ends with overflow', () => {
  const res = new StuckResponse();
  const { stream, ended } = streamOn(res);
  for (let i = 1; i <= 2 * MAX_BEHIND; i++) stream.push(event(i));
  expect(res.written).toHaveLength(1);
  expect(res.ended).toMatch(/^event: overflow\n/);
  expect(ended).toEqual([stream]);
  expect(stream.isOpen).toBe(false);
});

test('when the socket drains, then the waiting frames go out in order', () => {
  const res = new StuckResponse();
  const { stream } = streamOn(res);
  for (let i = 1; i <= 5; i++) stream.push(event(i));
  res.takes = 100;
  res.emit('drain');
  expect(res.written.map((f) => /^id: (\d+)/.exec(f)![1])).toEqual(['1', '2', '3', '4', '5']);
});

test('when a resume replays, then live events held meanwhile follow without the ones the replay sent', () => {
  const res = new StuckResponse();
  res.takes = 100;
  const { stream } = streamOn(res, true);
  stream.push(event(5));
  stream.push(event(6));
  stream.push(event(7));
  for (const seq of [4, 5, 6]) stream.replay(event(seq));
  stream.goLive(6n);
  stream.push(event(8));
  expect(res.written.map((f) => /^id: (\d+)/.exec(f)![1])).toEqual(['4', '5', '6', '7', '8']);
});

test('when an event committed after a later-numbered one, then the resume seam still sends it once', () => {
  const res = new StuckResponse();
  res.takes = 100;
  const { stream } = streamOn(res, true);
  // Written 11 then 12, committed 12 then 11: handed over as publications 20 and 21.
  stream.push(event(12, 20));
  stream.push(event(11, 21));
  stream.replay(event(12, 20));
  stream.goLive(20n);
  expect(res.written.map((f) => /^id: (\d+)/.exec(f)![1])).toEqual(['12', '11']);
});

test('when a replayed event’s live message arrives after the replay ended, then it is not sent again', () => {
  const res = new StuckResponse();
  res.takes = 100;
  const { stream } = streamOn(res, true);
  for (const seq of [4, 5]) stream.replay(event(seq));
  stream.goLive(5n);
  stream.push(event(5));
  stream.push(event(6));
  expect(res.written.map((f) => /^id: (\d+)/.exec(f)![1])).toEqual(['4', '5', '6']);
});

test('when quotes arrive while the client is behind, then only the newest per symbol is sent after the drain', () => {
  const res = new StuckResponse();
  const { stream } = streamOn(res);
  stream.latestOnly('EURUSD', 'event: quote\ndata: 1\n\n');
  stream.latestOnly('EURUSD', 'event: quote\ndata: 2\n\n');
  stream.latestOnly('EURUSD', 'event: quote\ndata: 3\n\n');
  res.takes = 100;
  res.emit('drain');
  expect(res.written).toEqual(['event: quote\ndata: 1\n\n', 'event: quote\ndata: 3\n\n']);
});
