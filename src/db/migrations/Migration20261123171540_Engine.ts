import { Migration } from '@mikro-orm/migrations';

/**
 * The trading engine (decisions 12). What a tick looks up is indexed by price, so
 * evaluating a tick costs about the number of orders it triggers, not the number resting:
 * - pending orders get `watch` (which side of the book and which direction fires them) and
 *   `watch_price` (the trigger, or a triggered stop-limit's limit price), generated from the
 *   row, with a partial index on (symbol, watch, watch_price) of the orders still waiting;
 * - open orders get partial indexes on (symbol, cmd, sl) and (symbol, cmd, tp), and on the
 *   price beyond which a trailing stop moves;
 * - `pending_orders.cancel_reason` says why the engine cancelled an order (a failed margin check);
 * - `orders.trailing_stop` carries a filled pending order's trailing stop to its position;
 * - `accounts.margin_call_active` makes the margin call event fire once per crossing.
 */
export class Migration20261123171540_Engine extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "pending_orders" add column "cancel_reason" varchar(255) null;`);
    // 1: a buy that fires when the ask falls to the price (buy limit; a triggered buy stop limit).
    // 2: a buy that fires when the ask rises to it (buy stop; buy stop limit).
    // 3: a sell that fires when the bid rises to it (sell limit; a triggered sell stop limit).
    // 4: a sell that fires when the bid falls to it (sell stop; sell stop limit).
    this.addSql(`alter table "pending_orders" add column "watch" smallint generated always as (case
      when status = 'pending' and cmd = 2 then 1 when status = 'triggered' and cmd = 6 then 1
      when status = 'pending' and cmd in (4, 6) then 2
      when status = 'pending' and cmd = 3 then 3 when status = 'triggered' and cmd = 7 then 3
      when status = 'pending' and cmd in (5, 7) then 4
      end) stored;`);
    this.addSql(`alter table "pending_orders" add column "watch_price" numeric(24,10) generated always as (case when status = 'triggered' then limit_price else trigger_price end) stored;`);
    this.addSql(`create index "pending_orders_watch_index" on "pending_orders" ("symbol", "watch", "watch_price") where watch is not null;`);

    this.addSql(`alter table "orders" add column "trailing_stop" numeric(24,10) null;`);
    this.addSql(`create index "orders_open_sl_index" on "orders" ("symbol", "cmd", "sl") where status = 'open' and sl is not null;`);
    this.addSql(`create index "orders_open_tp_index" on "orders" ("symbol", "cmd", "tp") where status = 'open' and tp is not null;`);
    // A buy's stop moves up once bid - trailing_stop > sl, a sell's down once ask + trailing_stop < sl.
    this.addSql(`create index "orders_trail_buy_index" on "orders" ("symbol", (coalesce(sl + trailing_stop, 0))) where status = 'open' and cmd = 0 and trailing_stop is not null;`);
    this.addSql(`create index "orders_trail_sell_index" on "orders" ("symbol", (coalesce(sl - trailing_stop, 1e20))) where status = 'open' and cmd = 1 and trailing_stop is not null;`);
    this.addSql(`create index "orders_open_symbol_index" on "orders" ("symbol", "account_id") where status = 'open';`);

    this.addSql(`alter table "accounts" add column "margin_call_active" boolean not null default false;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "accounts" drop column "margin_call_active";`);
    this.addSql(`drop index "orders_open_symbol_index";`);
    this.addSql(`drop index "orders_trail_sell_index";`);
    this.addSql(`drop index "orders_trail_buy_index";`);
    this.addSql(`drop index "orders_open_tp_index";`);
    this.addSql(`drop index "orders_open_sl_index";`);
    this.addSql(`alter table "orders" drop column "trailing_stop";`);
    this.addSql(`drop index "pending_orders_watch_index";`);
    this.addSql(`alter table "pending_orders" drop column "watch_price";`);
    this.addSql(`alter table "pending_orders" drop column "watch";`);
    this.addSql(`alter table "pending_orders" drop column "cancel_reason";`);
  }

}
