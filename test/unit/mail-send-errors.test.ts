import { classifySendError } from '../../src/mail/mail-transport';

test('when SMTP answers 5xx, then the failure is permanent; 4xx, refused connections and timeouts are temporary', () => {
  expect(
    classifySendError(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550, code: 'EENVELOPE' })).permanent,
  ).toBe(true);
  expect(classifySendError(Object.assign(new Error('Message rejected'), { responseCode: 554, code: 'EMESSAGE' })).permanent).toBe(
    true,
  );
  expect(classifySendError(Object.assign(new Error('Greylisted'), { responseCode: 451, code: 'EMESSAGE' })).permanent).toBe(
    false,
  );
  expect(classifySendError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ESOCKET' })).permanent).toBe(
    false,
  );
  expect(classifySendError(Object.assign(new Error('Connection timeout'), { code: 'ETIMEDOUT' })).permanent).toBe(false);
  expect(classifySendError('odd').message).toBe('odd');
  expect(classifySendError(Object.assign(new Error('x'), { code: 'ECONNECTION' })).message).toBe('ECONNECTION: x');
});
