import type { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { DuplicateSkuError, type ItemRepo } from "../../lib/inventory/model.ts";
import { openSqlite } from "../../lib/store/sqlite/connection.ts";
import { createSqliteItemRepo } from "../../lib/store/sqlite/items.ts";

const T0 = new Date("2025-01-02T03:04:05.000Z");
const T1 = new Date("2025-01-02T03:05:00.000Z");
const widget = { sku: "W-1", name: "Widget", quantity: 3, location: "Shelf A" };

let db: Database;
let items: ItemRepo;

beforeEach(() => {
  db = openSqlite(":memory:");
  items = createSqliteItemRepo(db);
});
afterEach(() => db.close());

describe("createSqliteItemRepo", () => {
  test("create() stores the item and returns it with id and updatedAt", async () => {
    const item = await items.create(widget, T0);
    expect(item).toEqual({ id: item.id, ...widget, updatedAt: T0.toISOString() });
    expect(await items.get(item.id)).toEqual(item);
  });

  test("create() throws DuplicateSkuError for a taken sku and writes nothing", async () => {
    await items.create(widget, T0);
    const error = await items.create({ ...widget, name: "Other" }, T0).catch((e) => e);
    expect(error).toBeInstanceOf(DuplicateSkuError);
    expect(error.sku).toBe("W-1");
    expect(await items.count()).toBe(1);
  });

  test("nextId() is the id the next insert takes; createWithId() uses it, or is null once it is taken", async () => {
    expect(await items.nextId()).toBe(1);
    const first = await items.create(widget, T0);
    const id = await items.nextId();
    expect(id).toBe(first.id + 1);
    const planned = await items.createWithId({ ...widget, sku: "W-2" }, T1, id);
    expect(planned).toEqual({ id, ...widget, sku: "W-2", updatedAt: T1.toISOString() });
    expect(await items.createWithId({ ...widget, sku: "W-3" }, T1, id)).toBeNull();
    expect(await items.count()).toBe(2);
    const taken = await items.createWithId(widget, T1, id + 1).catch((e) => e);
    expect(taken).toBeInstanceOf(DuplicateSkuError);
  });

  test("nextId() gives two creates planned at once two ids, as a sequence does", async () => {
    const [a, b] = [await items.nextId(), await items.nextId()];
    expect(b).toBe(a + 1);
    expect(await items.createWithId({ ...widget, sku: "W-B" }, T1, b)).not.toBeNull();
    expect(await items.createWithId({ ...widget, sku: "W-A" }, T1, a)).not.toBeNull();
    expect(await items.nextId()).toBe(b + 1);
  });

  test("an id is never given twice: not after its item is deleted, nor once nextId() handed it out", async () => {
    const first = await items.create(widget, T0);
    const second = await items.create({ ...widget, sku: "W-2" }, T0);
    await items.remove(second.id);
    const third = await items.create({ ...widget, sku: "W-3" }, T0);
    expect(third.id).toBe(second.id + 1);
    await items.remove(third.id);
    const planned = await items.nextId();
    expect(planned).toBe(third.id + 1);
    // A plan given up (its change planned again) leaves its id unused, as a sequence does.
    const created = await items.create({ ...widget, sku: "W-4" }, T0);
    expect(created.id).toBe(planned + 1);
    expect(await items.nextId()).toBe(created.id + 1);
    expect(first.id).toBe(1);
  });

  test("get() returns null for an unknown id", async () => {
    expect(await items.get(999)).toBeNull();
  });

  test("list() returns newest first and pages with limit and offset", async () => {
    for (const n of [1, 2, 3, 4, 5]) await items.create({ ...widget, sku: `S-${n}` }, T0);
    expect((await items.list()).map((i) => i.sku)).toEqual(["S-5", "S-4", "S-3", "S-2", "S-1"]);
    expect((await items.list({ limit: 2, offset: 1 })).map((i) => i.sku)).toEqual(["S-4", "S-3"]);
    expect(await items.count()).toBe(5);
  });

  test("update() applies the patch and returns before and after", async () => {
    const item = await items.create(widget, T0);
    const result = await items.update(item.id, { quantity: 7, location: undefined }, T1);
    expect(result?.before).toEqual(item);
    expect(result?.after).toEqual({ ...item, quantity: 7, updatedAt: T1.toISOString() });
    expect(await items.get(item.id)).toEqual(result?.after ?? null);
  });

  test("update() returns null for an unknown id", async () => {
    expect(await items.update(42, { name: "x" }, T1)).toBeNull();
  });

  test("update() throws DuplicateSkuError when taking another item's sku", async () => {
    await items.create(widget, T0);
    const other = await items.create({ ...widget, sku: "W-2" }, T0);
    const error = await items.update(other.id, { sku: "W-1" }, T1).catch((e) => e);
    expect(error).toBeInstanceOf(DuplicateSkuError);
    expect((await items.get(other.id))?.sku).toBe("W-2");
  });

  test("update() rejects a negative quantity through the CHECK constraint", async () => {
    const item = await items.create(widget, T0);
    await expect(items.update(item.id, { quantity: -1 }, T1)).rejects.toThrow(/CHECK/);
    expect((await items.get(item.id))?.quantity).toBe(3);
  });

  test("remove() deletes and returns the item, null when unknown", async () => {
    const item = await items.create(widget, T0);
    expect(await items.remove(item.id)).toEqual(item);
    expect(await items.get(item.id)).toBeNull();
    expect(await items.remove(item.id)).toBeNull();
  });
});
