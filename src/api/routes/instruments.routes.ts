import { z } from 'zod';
import { createInstrument, InstrumentSchema, InstrumentSymbol, instrumentView } from '../../domain/instruments/instruments';
import { CustomerGroupTermsSchema, customerInstruments } from '../../domain/instruments/customer-instruments';
import { Instrument } from '../../entities/instrument.entity';
import { asCustomer, asStaff } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { withPlaces } from '../../platform/decimal-places';
import { CONTRACT_SIZE_MAX } from '../../platform/bounds';
import { CurrencyCode } from '../../platform/money-text';

export const instrumentRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/platform/instruments',
    operationId: 'createInstrument',
    summary: 'Add a tradable instrument',
    tags: ['instruments'],
    access: { kind: 'staff', permission: 'manage_groups' },
    body: z.object({
      symbol: InstrumentSymbol,
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
  defineRoute({
    method: 'get',
    path: '/customers/me/instruments',
    operationId: 'listMyInstruments',
    summary: 'What you may trade, and on what terms',
    description:
      'One entry per group your trading accounts trade under (the wallet trades under none), in the order of your ' +
      'first login in it: the group’s commission, swap and margin terms, your logins in it, and every instrument ' +
      'you may trade in it (all but those the group disables), each with its spread (in points, added to the quotes of `GET /quotes`), commission and swaps. ' +
      'Groups you have no account in are not shown.',
    tags: ['instruments'],
    access: { kind: 'customer' },
    responses: {
      200: { description: 'Your groups and their instruments', schema: z.object({ items: z.array(CustomerGroupTermsSchema) }) },
    },
    handler: async ({ em, caller }) => json(200, { items: await customerInstruments(em, asCustomer(caller).customerId) }),
  }),
];
