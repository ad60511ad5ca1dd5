export interface Item {
  id: number;
  sku: string;
  name: string;
  quantity: number;
  location: string;
  /** ISO 8601. */
  updatedAt: string;
}

export type NewItem = Omit<Item, "id" | "updatedAt">;
export type ItemPatch = Partial<NewItem>;

/** Thrown by an ItemRepo when a sku is taken; the API answers 409. */
export class DuplicateSkuError extends Error {
  override name = "DuplicateSkuError";
  constructor(readonly sku: string) {
    super(`An item with sku ${JSON.stringify(sku)} already exists`);
  }
}

export interface ItemRepo {
  list(options?: { limit?: number; offset?: number }): Promise<Item[]>;
  count(): Promise<number>;
  get(id: number): Promise<Item | null>;
  /**
   * Like get, but inside a transaction the row stays locked until it ends, so a change decided
   * from what it returns cannot race another writer of the same item.
   */
  getForUpdate(id: number): Promise<Item | null>;
  create(input: NewItem, now: Date): Promise<Item>;
  /**
   * An id for the next item, so its change can be planned before the item is written.
   * Both stores hand it out once, whatever becomes of it: PostgreSQL from the items sequence,
   * SQLite by moving the items' AUTOINCREMENT counter past it. No other insert gets it, and no
   * id is ever given to a second item.
   */
  nextId(): Promise<number>;
  /** `create` with an id from `nextId`; null when that id was taken meanwhile. */
  createWithId(input: NewItem, now: Date, id: number): Promise<Item | null>;
  /** Returns the item before and after, or null for an unknown id. */
  update(id: number, patch: ItemPatch, now: Date): Promise<{ before: Item; after: Item } | null>;
  remove(id: number): Promise<Item | null>;
}
