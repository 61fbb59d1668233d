import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../../src/db/orm-config';
import {
  applyGroupTerms,
  GROUP_DEFAULTS,
  GROUP_TERMS,
  GroupCreateSchema,
  GroupPatchSchema,
  groupRow,
  GroupSchema,
  groupView,
  insertGroupStatement,
  termsOf,
} from '../../src/domain/groups/group-terms';
import { Group } from '../../src/entities/group.entity';

/** The one table the group's schemas, view, patching and INSERT come from. */
describe('the group terms table', () => {
  test('when a term names a column, then it is the column MikroORM maps its property to, and every column has a term', async () => {
    const orm = await MikroORM.init(ormConfig('postgres://postgres@127.0.0.1:5432/unused'));
    try {
      const meta = orm.getMetadata().get(Group);
      for (const [name, term] of Object.entries(GROUP_TERMS))
        expect([name, meta.properties[term.property]?.fieldNames]).toEqual([name, [name]]);
      const columns = Object.values(meta.properties).flatMap((p) => p.fieldNames ?? []);
      expect(columns.sort()).toEqual(['id', 'created_at', 'updated_at', ...Object.keys(GROUP_TERMS)].sort());
    } finally {
      await orm.close();
    }
  });

  test('when a group is created with a name only, then it takes the defaults of the spec’s Group table', () => {
    const terms = GroupCreateSchema.parse({ name: 'G', is_default: true, is_active: false, max_open_positions: 3 });
    expect(terms).toEqual({
      name: 'G',
      currency: 'USD',
      default_leverage: 100,
      margin_call_level: 100,
      stopout_level: 20,
      commission_type: 'none',
      commission_value: 0,
      swap_enabled: true,
      swap_multiplier: 1,
      swap_free: false,
      swap_free_days: 0,
      is_islamic: false,
      net_max_exposure: false,
    });
    const { name: _name, ...defaults } = terms;
    expect(GROUP_DEFAULTS).toEqual(defaults);
  });

  test('when terms are applied, then decimals are stored as text and the view gives them back as numbers', () => {
    const g = new Group();
    applyGroupTerms(g, { ...GROUP_DEFAULTS, name: 'G', margin_call_level: 100.1234, max_exposure: 0.1 });
    expect([g.marginCallLevel, g.maxExposure, g.swapMultiplier, g.description]).toEqual(['100.1234', '0.1', '1', null]);
    const view = groupView(g);
    expect(GroupSchema.parse(view)).toEqual(view);
    expect(view).toMatchObject({ margin_call_level: 100.1234, max_exposure: 0.1, is_default: false, is_active: true });
    applyGroupTerms(g, GroupPatchSchema.parse({ max_exposure: null, description: null, is_default: true }));
    expect([g.maxExposure, g.description, g.isDefault, g.name]).toEqual([null, null, true, 'G']);
  });

  test('when a clone starts from a view, then every term is carried and nothing else', () => {
    const g = new Group();
    applyGroupTerms(g, { ...GROUP_DEFAULTS, name: 'G', max_exposure: 5, max_open_positions: 7 });
    expect(Object.keys(termsOf(groupView(g))).sort()).toEqual(Object.keys(GROUP_TERMS).sort());
  });

  test('when the INSERT is built, then its columns and values come from the same row, named', () => {
    const g = new Group();
    applyGroupTerms(g, { ...GROUP_DEFAULTS, name: 'G' });
    const row = groupRow(g);
    const { sql, values } = insertGroupStatement(row);
    const columns = /\(([^)]*)\)/
      .exec(sql)![1]!
      .split(',')
      .map((c) => c.trim());
    expect(values).toEqual(columns.map((c) => row[c as keyof typeof row]));
    expect(sql.match(/\?/g)).toHaveLength(columns.length);
    expect(row).toMatchObject({ id: g.id, name: 'G', margin_call_level: '100', max_exposure: null, is_active: true });
  });
});
