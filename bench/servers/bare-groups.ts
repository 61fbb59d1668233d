import { createServer } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Pool } from 'pg';
import { applyGroupTerms, GROUP_DEFAULTS, groupRow, groupView, insertGroupStatement } from '../../src/domain/groups/group-terms';
import { Group } from '../../src/entities/group.entity';
import { pgPlaceholders } from '../../src/platform/named-sql';
import { listenAndAnnounce } from './announce';

/**
 * The floor for POST /groups: express with express.json() and one handler that checks the
 * name, builds the same trading_groups row with the Group table's defaults (the same terms
 * table, row builder and INSERT the service uses) and writes it with one `pg` query,
 * answering 201 with the group in the API's shape. No auth, no validation library, no ORM
 * unit of work, no audit row, no transaction beyond the single statement. Same database as
 * the service (which creates and migrates it; start the service first), same pool size (10).
 */
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_bench';
const pool = new Pool({ connectionString: databaseUrl, max: 10 });

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
  const group = new Group();
  applyGroupTerms(group, { ...GROUP_DEFAULTS, name, description });
  const { sql, values } = insertGroupStatement(groupRow(group));
  pool.query(pgPlaceholders(sql), values).then(() => {
    res.status(201).json(groupView(group));
  }, next);
});

listenAndAnnounce(createServer(app), () => pool.end());
