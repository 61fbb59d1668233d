import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Pool } from 'pg';
import { listenAndAnnounce } from './announce';

/**
 * The floor for POST /groups: express with express.json() and one handler that checks the
 * name and inserts the same trading_groups row (the defaults of the Group table) with one
 * `pg` query, answering 201 with the row in the API's shape. No auth, no validation library,
 * no ORM, no audit row, no transaction beyond the single statement. Same database as the
 * service (which creates and migrates it; start the service first), same pool size (10).
 */
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_bench';
const pool = new Pool({ connectionString: databaseUrl, max: 10 });

const INSERT = `insert into trading_groups (id, created_at, updated_at, name, description, currency, default_leverage,
  margin_call_level, stopout_level, commission_type, commission_value, swap_enabled, swap_multiplier, swap_free,
  swap_free_days, is_islamic, max_exposure, net_max_exposure, max_open_positions, is_default, is_active)
  values ($1, $2, $2, $3, $4, 'USD', 100, 100, 20, 'none', 0, true, 1, false, 0, false, null, false, null, false, true)
  returning *`;

interface Row {
  id: string;
  created_at: Date;
  updated_at: Date;
  name: string;
  description: string | null;
  currency: string;
  default_leverage: number;
  margin_call_level: string;
  stopout_level: string;
  commission_type: string;
  commission_value: string;
  swap_enabled: boolean;
  swap_multiplier: string;
  swap_free: boolean;
  swap_free_days: number;
  is_islamic: boolean;
  max_exposure: string | null;
  net_max_exposure: boolean;
  max_open_positions: number | null;
  is_default: boolean;
  is_active: boolean;
}

const app = express();
app.disable('x-powered-by');
app.use(express.json());
app.post('/groups', (req: Request, res: Response, next: NextFunction) => {
  const name: unknown = req.body?.name;
  if (typeof name !== 'string' || name.length < 1 || name.length > 64) {
    res.status(422).json({ detail: [{ loc: ['body', 'name'], msg: 'Invalid name', type: 'value_error' }] });
    return;
  }
  const description = typeof req.body.description === 'string' ? req.body.description : null;
  pool.query<Row>(INSERT, [randomUUID(), new Date(), name, description]).then(({ rows: [row] }) => {
    res.status(201).json({
      ...row,
      margin_call_level: Number(row.margin_call_level),
      stopout_level: Number(row.stopout_level),
      commission_value: Number(row.commission_value),
      swap_multiplier: Number(row.swap_multiplier),
      max_exposure: row.max_exposure === null ? null : Number(row.max_exposure),
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    });
  }, next);
});

listenAndAnnounce(createServer(app), () => pool.end());
