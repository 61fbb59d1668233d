import { z } from 'zod';
import { createInstrument, InstrumentSchema, instrumentView } from '../../domain/instruments/instruments';
import { Instrument } from '../../entities/instrument.entity';
import { asStaff } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { withPlaces } from '../../platform/decimal-places';
import { CONTRACT_SIZE_MAX } from '../../domain/money/bounds';
import { CurrencyCode } from '../../domain/money/money-text';

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
      contract_size: withPlaces(z.number().gt(0).max(CONTRACT_SIZE_MAX), 4).describe('Units per lot, up to 1,000,000'),
      base_currency: CurrencyCode,
      quote_currency: CurrencyCode,
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
