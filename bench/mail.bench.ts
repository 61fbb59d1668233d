import { randomBytes, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Pool } from 'pg';
import { renderMail } from '../src/domain/mail/renderer';
import { MAIL_TEMPLATES } from '../src/domain/mail/templates';
import { SendMailJob } from '../src/jobs/send-mail.job';
import { SMTP_POOL } from '../src/mail/mail-transport';
import { BASE_DATABASE_URL, benchPool, dropDatabase, progressOf, withDatabase } from './lib/bench-kit';
import { type BatchRound, type Figure, type Harness } from './lib/harness';

/**
 * Mail through the queue: mails per second from a committed `mail_messages` row to a local
 * SMTP sink through the whole path the service uses (the outbox rows written, one send-mail
 * job each added to BullMQ, and the real worker tier, a child process as in production
 * (ROLE=worker, WORKER_CONCURRENCY 8), whose send runs claim rows in batches, render them
 * from `email_templates`, send them over the pooled nodemailer transport and record each batch
 * in one statement), against nodemailer sending the same rendered messages straight to the same sink from
 * this process, over a pool of the same size with as many sends in flight (aim: a ratio of at
 * least 0.6). The sink (smtp-server) runs in a child of its own.
 *
 * Each round is one timed batch of MAILS: on the candidate side from the first row insert to
 * the last row recorded `sent` (polled every 20 ms); on the baseline side from the first send
 * to the last acceptance. A warm-up batch runs on each side first.
 */
const progress = progressOf('mail');
const MAILS = positiveInteger('BENCH_MAILS') ?? 1000;
const CONCURRENCY = 8;
const ROUNDS = positiveInteger('BENCH_ROUNDS') ?? 3;
const TEMPLATE = MAIL_TEMPLATES.find((t) => t.key === 'withdrawal_approved')!;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const FROM = 'Trading Back Office <no-reply@broker.invalid>';

const dataOf = (i: number) => ({
  first_name: `Ada${i}`,
  amount: `${100 + (i % 900)}.00`,
  currency: 'USD',
  login: String(100000 + i),
});

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_mail_${tag}`;
  const databaseUrl = withDatabase(BASE_DATABASE_URL, database);
  const prefix = `bench-mail-${tag}`;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(SendMailJob.queue, { connection: redis, prefix });
  let pool: Pool | undefined;
  try {
    const sink = await h.start({ entry: 'servers/smtp-sink.ts', name: 'smtp-sink' });
    const smtpUrl = `smtp://127.0.0.1:${sink.port}`;
    await h.startWorker('worker', {
      BENCH_DATABASE_URL: databaseUrl,
      BENCH_QUEUE_PREFIX: prefix,
      SMTP_URL: smtpUrl,
      WORKER_QUEUES: 'mail',
      WORKER_CONCURRENCY: String(CONCURRENCY),
    });
    pool = benchPool(databaseUrl, 4);
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: sink.port, secure: false, pool: true, ...SMTP_POOL });

    const sides = { candidate: [] as BatchRound[], baseline: [] as BatchRound[] };
    progress('warm-up');
    await throughQueue(pool, queue, 200);
    await straight(transport, 200);
    for (let round = 1; round <= ROUNDS; round++) {
      const c = await throughQueue(pool, queue, MAILS);
      sides.candidate.push(c);
      const b = await straight(transport, MAILS);
      sides.baseline.push(b);
      progress(`round ${round}/${ROUNDS}: queue ${rate(c)} mails/s, straight ${rate(b)} mails/s`);
    }
    transport.close();
    return [
      h.record({
        name: `mails/s through the send-mail queue and worker vs nodemailer straight to the sink, ${MAILS} mails`,
        unit: 'mails',
        size: MAILS,
        connections: CONCURRENCY,
        ...sides,
        detail: { worker_concurrency: CONCURRENCY, smtp_pool: SMTP_POOL, template: TEMPLATE.key },
      }),
    ];
  } finally {
    await queue.close().catch(() => undefined);
    await redis.quit().catch(() => undefined);
    await pool?.end().catch(() => undefined);
    await h.close();
    await dropDatabase(database).catch((err: unknown) => progress(`could not drop database ${database}: ${String(err)}`));
  }
}

/** The candidate: rows written as queueMail writes them, one job each, timed until every row is recorded sent. */
async function throughQueue(pool: Pool, queue: Queue, n: number): Promise<BatchRound> {
  const ids = Array.from({ length: n }, () => randomUUID());
  const cpu = process.cpuUsage();
  const started = performance.now();
  await pool.query(
    `insert into mail_messages (id, created_at, updated_at, template, locale, to_address, data, status, attempts)
     select id, now(), now(), $2, 'en', 'bench-' || ord || '@bench.test', json_build_object(
              'first_name', 'Ada' || ord, 'amount', (100 + ord % 900) || '.00', 'currency', 'USD', 'login', (100000 + ord)::text),
            'queued', 0
       from unnest($1::uuid[]) with ordinality as t(id, ord)`,
    [ids, TEMPLATE.key],
  );
  await queue.addBulk(
    ids.map((id) => ({
      name: SendMailJob.name,
      data: { mail_id: id },
      opts: { ...SendMailJob.options, jobId: SendMailJob.jobId!({ mail_id: id }) },
    })),
  );
  let done = 0;
  let failed = 0;
  while (done < n) {
    await new Promise((r) => setTimeout(r, 20));
    const { rows } = await pool.query<{ done: number; failed: number }>(
      `select count(*) filter (where status <> 'queued' and status <> 'sending')::int as done,
              count(*) filter (where status in ('failed', 'unknown'))::int as failed
         from mail_messages where id = any($1::uuid[])`,
      [ids],
    );
    done = rows[0]!.done;
    failed = rows[0]!.failed;
  }
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { ms, failures: failed, loadCpu: (used.user + used.system) / 1000 / ms };
}

/** The baseline: the same messages, rendered beforehand, sent straight with CONCURRENCY in flight. */
async function straight(transport: Transporter, n: number): Promise<BatchRound> {
  const messages = Array.from({ length: n }, (_, i) => {
    const mail = renderMail(TEMPLATE, { locale: 'en', data: dataOf(i + 1), secrets: {} });
    return {
      from: FROM,
      to: `bench-${i + 1}@bench.test`,
      subject: mail.subject,
      text: mail.text,
      html: mail.html ?? undefined,
      messageId: `<${randomUUID()}@trading-api>`,
    };
  });
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  let failures = 0;
  const worker = async () => {
    while (next < n) {
      const message = messages[next++]!;
      try {
        await transport.sendMail(message);
      } catch {
        failures += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { ms, failures, loadCpu: (used.user + used.system) / 1000 / ms };
}

const rate = (r: BatchRound) => Math.round(MAILS / (r.ms / 1000));

function positiveInteger(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}
