import type { Database } from "bun:sqlite";
import {
  DuplicateSkuError,
  type Item,
  type ItemPatch,
  type ItemRepo,
  type NewItem,
} from "../../inventory/model.ts";

type ItemRow = {
  id: number;
  sku: string;
  name: string;
  quantity: number;
  location: string;
  updated_at: string;
};

const COLUMNS = "id, sku, name, quantity, location, updated_at";

/**
 * Items in SQLite. Plain storage only: validation, change detection and the transaction that
 * also enqueues deliveries live in lib/inventory, shared with the PostgreSQL store.
 */
export function createSqliteItemRepo(db: Database): ItemRepo {
  const listStmt = db.query<ItemRow, { limit: number; offset: number }>(
    `SELECT ${COLUMNS} FROM items ORDER BY id DESC LIMIT $limit OFFSET $offset`,
  );
  const countStmt = db.query<{ n: number }, []>("SELECT count(*) AS n FROM items");
  const getStmt = db.query<ItemRow, { id: number }>(`SELECT ${COLUMNS} FROM items WHERE id = $id`);
  const insertStmt = db.query<ItemRow, Omit<ItemRow, "id">>(
    `INSERT INTO items (sku, name, quantity, location, updated_at)
     VALUES ($sku, $name, $quantity, $location, $updated_at) RETURNING ${COLUMNS}`,
  );
  // nextId() reserves as PostgreSQL's sequence does: the items' AUTOINCREMENT counter is moved
  // past the id it hands out, so neither another create (any process) nor a later one gets it,
  // even if it is never used; and an id once used is above the counter for good (never reused).
  const reserveIdStmt = db.query<{ seq: number }, []>(
    `UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT max(id) FROM items), 0)) + 1
     WHERE name = 'items' RETURNING seq`,
  );
  const firstIdStmt = db.query<{ seq: number }, []>(
    `INSERT INTO sqlite_sequence (name, seq)
     SELECT 'items', coalesce(max(id), 0) + 1 FROM items RETURNING seq`,
  );
  const reserveId = db.transaction(() => (reserveIdStmt.get() ?? firstIdStmt.get())?.seq);
  // An id taken meanwhile is no row (the caller plans again); a taken sku still fails.
  const insertWithIdStmt = db.query<ItemRow, ItemRow>(
    `INSERT INTO items (id, sku, name, quantity, location, updated_at)
     VALUES ($id, $sku, $name, $quantity, $location, $updated_at)
     ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`,
  );
  const updateStmt = db.query<ItemRow, ItemRow>(
    `UPDATE items SET sku = $sku, name = $name, quantity = $quantity, location = $location,
       updated_at = $updated_at WHERE id = $id RETURNING ${COLUMNS}`,
  );
  const deleteStmt = db.query<ItemRow, { id: number }>(
    `DELETE FROM items WHERE id = $id RETURNING ${COLUMNS}`,
  );

  return {
    async list(options = {}) {
      const limit = options.limit ?? 50;
      const offset = options.offset ?? 0;
      return listStmt.all({ limit, offset }).map(toItem);
    },
    async count() {
      return countStmt.get()?.n ?? 0;
    },
    async get(id) {
      const row = getStmt.get({ id });
      return row ? toItem(row) : null;
    },
    // A store transaction begins IMMEDIATE: it holds the write lock from its first statement,
    // so no writer in this process or another changes the row before it ends.
    async getForUpdate(id) {
      const row = getStmt.get({ id });
      return row ? toItem(row) : null;
    },
    async create(input: NewItem, now: Date) {
      const row = withDuplicateSku(input.sku, () =>
        insertStmt.get({
          sku: input.sku,
          name: input.name,
          quantity: input.quantity,
          location: input.location,
          updated_at: now.toISOString(),
        }),
      );
      if (!row) throw new Error("Inserting an item returned no row");
      return toItem(row);
    },
    async nextId() {
      const id = reserveId.immediate();
      if (id === undefined) throw new Error("Reserving an item id returned no row");
      return id;
    },
    async createWithId(input: NewItem, now: Date, id: number) {
      const row = withDuplicateSku(input.sku, () =>
        insertWithIdStmt.get({
          id,
          sku: input.sku,
          name: input.name,
          quantity: input.quantity,
          location: input.location,
          updated_at: now.toISOString(),
        }),
      );
      return row ? toItem(row) : null;
    },
    async update(id: number, patch: ItemPatch, now: Date) {
      // Read and write without awaiting in between, so no other statement on this connection
      // can slip in; inside a store transaction both are part of it anyway.
      const current = getStmt.get({ id });
      if (!current) return null;
      const before = toItem(current);
      const next = { ...before, ...definedFields(patch) };
      const row = withDuplicateSku(next.sku, () =>
        updateStmt.get({
          id,
          sku: next.sku,
          name: next.name,
          quantity: next.quantity,
          location: next.location,
          updated_at: now.toISOString(),
        }),
      );
      if (!row) return null;
      return { before, after: toItem(row) };
    },
    async remove(id) {
      const row = deleteStmt.get({ id });
      return row ? toItem(row) : null;
    },
  };
}

function toItem(row: ItemRow): Item {
  return {
    id: row.id,
    sku: row.sku,
    name: row.name,
    quantity: row.quantity,
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

function withDuplicateSku<T>(sku: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (isUniqueSkuViolation(error)) throw new DuplicateSkuError(sku);
    throw error;
  }
}

function isUniqueSkuViolation(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    (code === "SQLITE_CONSTRAINT_UNIQUE" || code === undefined) &&
    error.message.includes("UNIQUE constraint failed: items.sku")
  );
}
