import {
  DuplicateSkuError,
  type Item,
  type ItemPatch,
  type ItemRepo,
  type NewItem,
} from "../../inventory/model.ts";
import { type Db, isUniqueViolation, toNumber } from "./db.ts";

interface ItemRow {
  id: string | number;
  sku: string;
  name: string;
  quantity: string | number;
  location: string;
  updated_at: string;
}

/**
 * Items in PostgreSQL, same behaviour as lib/store/sqlite/items.ts. Plain storage only:
 * validation, change detection and the transaction that also enqueues deliveries live in
 * lib/inventory, shared by both stores.
 */
export function createPostgresItemRepo(db: Db): ItemRepo {
  return {
    async list(options = {}) {
      const limit = options.limit ?? 50;
      const offset = options.offset ?? 0;
      const rows = await db.sql<ItemRow[]>`
        SELECT * FROM items ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`;
      return rows.map(toItem);
    },
    async count() {
      const [row] = await db.sql<Array<{ n: number }>>`SELECT count(*)::int AS n FROM items`;
      return row?.n ?? 0;
    },
    async get(id) {
      if (!Number.isSafeInteger(id)) return null;
      const [row] = await db.sql<ItemRow[]>`SELECT * FROM items WHERE id = ${id}`;
      return row ? toItem(row) : null;
    },
    async getForUpdate(id) {
      if (!Number.isSafeInteger(id)) return null;
      const [row] = await db.sql<ItemRow[]>`SELECT * FROM items WHERE id = ${id} FOR UPDATE`;
      return row ? toItem(row) : null;
    },
    async create(input: NewItem, now: Date) {
      const [row] = await withDuplicateSku(input.sku, () =>
        db.isolated(
          (sql) => sql<ItemRow[]>`
            INSERT INTO items (sku, name, quantity, location, updated_at)
            VALUES (${input.sku}, ${input.name}, ${input.quantity}, ${input.location},
              ${now.toISOString()})
            RETURNING *`,
        ),
      );
      if (!row) throw new Error("Inserting an item returned no row");
      return toItem(row);
    },
    // A sequence hands a value out once, whatever becomes of the transaction that asked.
    async nextId() {
      const [row] = await db.sql<Array<{ id: string | number }>>`
        SELECT nextval(pg_get_serial_sequence('items', 'id')) AS id`;
      if (!row) throw new Error("Reading the next item id returned no row");
      return toNumber(row.id);
    },
    async createWithId(input: NewItem, now: Date, id: number) {
      if (!Number.isSafeInteger(id)) return null;
      const [row] = await withDuplicateSku(input.sku, () =>
        db.isolated(
          (sql) => sql<ItemRow[]>`
            INSERT INTO items (id, sku, name, quantity, location, updated_at)
            VALUES (${id}, ${input.sku}, ${input.name}, ${input.quantity}, ${input.location},
              ${now.toISOString()})
            ON CONFLICT (id) DO NOTHING
            RETURNING *`,
        ),
      );
      return row ? toItem(row) : null;
    },
    async update(id: number, patch: ItemPatch, now: Date) {
      if (!Number.isSafeInteger(id)) return null;
      const fields = definedFields(patch);
      return withDuplicateSku(fields.sku ?? "", () =>
        // The row is locked between the read and the write, so `before` is what was replaced.
        db.isolated(async (sql) => {
          const [current] = await sql<ItemRow[]>`SELECT * FROM items WHERE id = ${id} FOR UPDATE`;
          if (!current) return null;
          const before = toItem(current);
          const next = { ...before, ...fields };
          const [row] = await sql<ItemRow[]>`
            UPDATE items SET sku = ${next.sku}, name = ${next.name}, quantity = ${next.quantity},
              location = ${next.location}, updated_at = ${now.toISOString()}
            WHERE id = ${id}
            RETURNING *`;
          return row ? { before, after: toItem(row) } : null;
        }),
      );
    },
    async remove(id) {
      if (!Number.isSafeInteger(id)) return null;
      const [row] = await db.sql<ItemRow[]>`DELETE FROM items WHERE id = ${id} RETURNING *`;
      return row ? toItem(row) : null;
    },
  };
}

function toItem(row: ItemRow): Item {
  return {
    id: toNumber(row.id),
    sku: row.sku,
    name: row.name,
    quantity: toNumber(row.quantity),
    location: row.location,
    updatedAt: row.updated_at,
  };
}

/** `{quantity: undefined}` must not overwrite the stored value with NULL. */
function definedFields(patch: ItemPatch): ItemPatch {
  return Object.fromEntries(
    Object.entries(patch).filter(([, value]) => value !== undefined),
  ) as ItemPatch;
}

async function withDuplicateSku<T>(sku: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, "items_sku_key")) throw new DuplicateSkuError(sku);
    throw error;
  }
}
