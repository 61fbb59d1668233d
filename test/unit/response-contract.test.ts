import { z } from 'zod';
import { replyProblems } from '../../src/api/http/response-contract';
import type { RouteSpec } from '../../src/api/http/route';

const route = {
  method: 'get',
  path: '/things/{id}',
  responses: {
    200: { description: 'A thing', schema: z.object({ id: z.int(), meta: z.record(z.string(), z.unknown()).nullable() }) },
    204: { description: 'Nothing' },
    404: { description: 'Not found' },
  },
} as unknown as RouteSpec;

describe('replyProblems: an answer against its route’s declared responses', () => {
  test('when the body fits the schema exactly, then there is no problem', () => {
    expect(replyProblems(route, 200, { id: 1, meta: { anything: [1, { deep: true }] } })).toEqual([]);
    expect(replyProblems(route, 200, { id: 1, meta: null })).toEqual([]);
    expect(replyProblems(route, 204, undefined)).toEqual([]);
  });

  test('when the status is not declared, then that is the problem', () => {
    expect(replyProblems(route, 201, { id: 1, meta: null })).toEqual([
      'status 201 is not declared (the route declares 200, 204, 404)',
    ]);
  });

  test('when a field is missing or of the wrong type, then each issue names its path', () => {
    expect(replyProblems(route, 200, { id: 1.5 })).toEqual([
      expect.stringMatching(/^id: .*\(invalid_type\)$/),
      expect.stringMatching(/^meta: .*\(invalid_type\)$/),
    ]);
  });

  test('when the body has a key the schema does not name, then it is reported (a record keeps its keys)', () => {
    expect(replyProblems(route, 200, { id: 1, meta: { free: 1 }, extra: true })).toEqual(['extra: not in the schema']);
  });

  test('when the body is checked, then it is checked as JSON: undefined fields are gone, dates are text', () => {
    expect(replyProblems(route, 200, { id: 1, meta: null, gone: undefined })).toEqual([]);
    expect(replyProblems(route, 200, { id: 1, meta: { at: new Date(0) } })).toEqual([]);
  });

  test('when a body is missing or unexpected, then that is the problem', () => {
    expect(replyProblems(route, 200, undefined)).toEqual(['the answer has no body, but the route declares one']);
    expect(replyProblems(route, 204, {})).toEqual(['the answer has a body, but the route declares none for this status']);
  });
});
