import { randomBytes } from 'node:crypto';
import { adminToken, createCustomer } from '../../helpers/identity';
import { decodedMessage } from '../../helpers/mail';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { openSse, type SseClient } from '../../helpers/sse-client';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';
import { mailsTo } from '../mail/password-reset-kit';

jest.setTimeout(120_000);

const PORTAL = 'https://portal.broker.test/support';

let smtp: SmtpSink;
let app: TestApp;
let admin: string;
let receiver: Receiver;
const streams: SseClient[] = [];

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startTestApp({ label: 'convdelivery', env: { SMTP_URL: smtp.url, SUPPORT_CONVERSATION_URL: PORTAL } });
  admin = await adminToken(app);
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  receiver = await startReceiver(secret);
  const hook = await app.request('POST', '/webhooks', {
    token: admin,
    body: {
      endpoint_url: receiver.url,
      secret,
      events: ['conversation.created', 'conversation.message_added', 'conversation.status_changed'],
    },
  });
  expect(hook.status).toBe(201);
});
afterAll(async () => {
  for (const s of streams) s.close();
  await app?.stop();
  await receiver?.close();
  await smtp?.close();
});

async function stream(path: string, token: string): Promise<SseClient> {
  const client = await openSse(`${app.baseUrl}${path}`, { authorization: `Bearer ${token}` });
  expect(client.status).toBe(200);
  streams.push(client);
  return client;
}

test('when staff answer and note, then the customer gets the answer on its stream, as a notification and as a mail with a link but not the text; the note reaches none of these nor any webhook', async () => {
  const customer = await createCustomer(app, admin);
  const mine = await stream('/customers/me/stream', customer.token);
  const desk = await stream('/api/backoffice/stream', admin);

  const c = (
    await app.request('POST', '/customers/me/conversations', {
      token: customer.token,
      body: { subject: 'Card deposit', body: 'CUSTOMER-QUESTION where is my money' },
    })
  ).body;
  // Staff get the customer's message on the back-office stream.
  await desk.waitFor((e) => e.event === 'conversation.message_added' && e.data.includes('CUSTOMER-QUESTION'), 20_000);

  const note = await app.request('POST', `/api/crm/conversations/${c.id}/messages`, {
    token: admin,
    body: { body: 'INTERNAL-NOTE customer is a known chargebacker', internal: true },
  });
  expect(note.status).toBe(201);
  const answer = await app.request('POST', `/api/crm/conversations/${c.id}/messages`, {
    token: admin,
    body: { body: 'PUBLIC-ANSWER it arrives tomorrow' },
  });
  expect(answer.status).toBe(201);

  await mine.waitFor((e) => e.event === 'conversation.message_added' && e.data.includes('PUBLIC-ANSWER'), 20_000);

  const notification = await waitFor('the reply notification', async () => {
    const res = await app.request('GET', '/customers/me/notifications', { token: customer.token });
    return res.body.items.find((n: any) => n.type === 'conversation.message_added');
  });
  expect(notification.data).toEqual({ conversation_id: c.id, subject: 'Card deposit' });
  expect(notification.body).toContain('Card deposit');

  const mail = await waitFor('the reply mail', async () => mailsTo(smtp, customer.email)[0]);
  const text = decodedMessage(mail.raw);
  expect(text).toContain(`${PORTAL}/${c.id}`);
  expect(text).not.toContain('PUBLIC-ANSWER');

  await waitFor('the webhook of the answer', async () => receiver.received.some((r) => r.body.includes('PUBLIC-ANSWER')), 20_000);

  // Only one notification and one mail: the customer's own message and the note tell nothing.
  const notes = await sql(app, `select 1 from notifications where customer_id = ?`, [customer.id]);
  expect(notes).toHaveLength(1);
  expect(mailsTo(smtp, customer.email)).toHaveLength(1);
  for (const surface of [
    JSON.stringify(mine.events),
    JSON.stringify(receiver.received.map((r) => r.body)),
    JSON.stringify(await sql(app, 'select title, body, data from notifications where customer_id = ?', [customer.id])),
    mailsTo(smtp, customer.email)
      .map((m) => decodedMessage(m.raw))
      .join('\n'),
    JSON.stringify(await sql(app, 'select data from domain_events where customer_id = ?', [customer.id])),
  ])
    expect(surface).not.toContain('INTERNAL-NOTE');
});
