import { z } from 'zod';
import { createInstrument, instrumentView } from '../../domain/instruments/instruments';
import { Instrument } from '../../entities/instrument.entity';
import { asStaff } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { withPlaces } from '../http/amounts';

const Currency = z.string().regex(/^[A-Z]{3}$/);

export const InstrumentSchema = z.object({
  id: z.uuid(),
  symbol: z.string(),
  description: z.string().nullable(),
  digits: z.int(),
  contract_size: z.number(),
  base_currency: z.string(),
  quote_currency: z.string(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

export const instrumentRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/platform/instruments',
    operationId: 'createInstrument',
    summary: 'Add a tradable instrument',
    tags: ['instruments'],
    access: { kind: 'staff', permission: 'manage_groups' },
    body: z.object({
      symbol: z
        .string()
        .regex(/^[A-Z0-9][A-Z0-9._-]{0,31}$/)
        .describe('Capital letters, digits, dot, dash or underscore; up to 32'),
      description: z.string().max(500).nullable().optional(),
      digits: z.int().min(0).max(10),
      contract_size: withPlaces(z.number().gt(0).max(1e12), 4),
      base_currency: Currency,
      quote_currency: Currency,
    }),
    responses: { 201: { description: 'Created', schema: InstrumentSchema }, 409: { description: 'SYMBOL_TAKEN' } },
    handler: async ({ body, em, caller }) => json(201, instrumentView(await createInstrument(em, asStaff(caller), body))),
  }),
  defineRoute({
    method: 'get',
    path: '/api/platform/instruments',
    operationId: 'listInstruments',
    summary: 'All instruments by symbol',
    tags: ['instruments'],
    access: { kind: 'staff', permission: 'view_groups' },
    responses: { 200: { description: 'Instruments', schema: z.object({ items: z.array(InstrumentSchema) }) } },
    handler: async ({ em }) =>
      json(200, { items: (await em.find(Instrument, {}, { orderBy: { symbol: 'asc' } })).map(instrumentView) }),
  }),
];
