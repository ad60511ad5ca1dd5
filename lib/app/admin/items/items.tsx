/** @jsxImportSource hono/jsx */
import { type Context, Hono } from "hono";
import { DuplicateSkuError, type Item } from "../../../inventory/model.ts";
import { createItem, deleteItem, updateItem } from "../../../webhooks/events/item-changes.ts";
import type { Store } from "../../../webhooks/ports.ts";
import type { AppEnv } from "../../context.ts";
import { changeContext } from "../../items/items-api.ts";
import { DELIVERIES } from "../background-tasks/background-tasks-views.tsx";
import { RecentDeliveries } from "../background-tasks/recent-deliveries.tsx";
import { positiveInt } from "../format.ts";
import { NotFoundPage } from "../not-found.tsx";
import { withNotice } from "../notices.ts";
import { pageContext, renderPage } from "../page.tsx";
import {
  emptyItemForm,
  type ItemFormValues,
  itemFormValues,
  parseItemForm,
  readItemForm,
} from "./item-form.ts";
import { ITEMS, ItemFormPage, ItemListPage } from "./items-views.tsx";

const PAGE_SIZE = 25;
/** Deliveries shown on an item's page (the link leads to all of them). */
const RECENT_DELIVERIES = 10;

/** Items: list, create, edit, delete; each change goes through lib/inventory like the API's. */
export function itemRoutes(deps: { store: Store; now: () => Date }): Hono<AppEnv> {
  const { store, now } = deps;
  const routes = new Hono<AppEnv>();

  routes.get("/", async (c) => {
    const total = await store.items.count();
    const pageCount = Math.max(1, Math.ceil(total / PAGE_SIZE));
    const pageNumber = Math.min(positiveInt(c.req.query("page")) ?? 1, pageCount);
    const items = await store.items.list({
      limit: PAGE_SIZE,
      offset: (pageNumber - 1) * PAGE_SIZE,
    });
    return renderPage(
      c,
      <ItemListPage
        page={pageContext(c)}
        items={items}
        pageNumber={pageNumber}
        pageCount={pageCount}
        total={total}
      />,
    );
  });

  routes.get("/new", (c) =>
    renderPage(c, <ItemFormPage page={pageContext(c)} values={emptyItemForm()} />),
  );

  routes.post("/", async (c) => {
    const values = readItemForm(await c.req.parseBody());
    const parsed = parseItemForm(values);
    if (!parsed.ok) return formPage(c, values, parsed.errors, 400);
    try {
      const { deliveryIds } = await createItem(store, parsed.item, changeContext(c, now));
      return c.redirect(withNotice(ITEMS, "item-created", deliveryIds.length), 303);
    } catch (error) {
      return duplicateSku(c, error, values);
    }
  });

  routes.get("/:id", async (c) => {
    const item = await findItem(c);
    if (!item) return notFound(c);
    const page = pageContext(c);
    const recent = await store.queue.list({
      object: { model: "item", id: item.id },
      limit: RECENT_DELIVERIES,
    });
    return renderPage(
      c,
      <ItemFormPage page={page} values={itemFormValues(item)} item={item}>
        <RecentDeliveries
          page={page}
          title="Deliveries of this item"
          deliveries={recent}
          allHref={`${DELIVERIES}?item=${item.id}`}
          returnTo={`${ITEMS}/${item.id}`}
          nowMs={now().getTime()}
        />
      </ItemFormPage>,
    );
  });

  routes.post("/:id", async (c) => {
    const item = await findItem(c);
    if (!item) return notFound(c);
    const values = readItemForm(await c.req.parseBody());
    const parsed = parseItemForm(values);
    if (!parsed.ok) return formPage(c, values, parsed.errors, 400, item);
    try {
      const result = await updateItem(store, item.id, parsed.item, changeContext(c, now));
      if (!result) return notFound(c);
      const notice = result.changed
        ? withNotice(ITEMS, "item-updated", result.deliveryIds.length)
        : withNotice(ITEMS, "item-unchanged");
      return c.redirect(notice, 303);
    } catch (error) {
      return duplicateSku(c, error, values, item);
    }
  });

  routes.post("/:id/delete", async (c) => {
    const id = positiveInt(c.req.param("id"));
    const result = id === null ? null : await deleteItem(store, id, changeContext(c, now));
    if (!result) return notFound(c);
    return c.redirect(withNotice(ITEMS, "item-deleted", result.deliveryIds.length), 303);
  });

  async function findItem(c: Context<AppEnv>): Promise<Item | null> {
    const id = positiveInt(c.req.param("id"));
    return id === null ? null : store.items.get(id);
  }

  function notFound(c: Context<AppEnv>) {
    return renderPage(c, <NotFoundPage page={pageContext(c)} what="Item" />, 404);
  }

  function formPage(
    c: Context<AppEnv>,
    values: ItemFormValues,
    errors: { formErrors: string[]; fieldErrors: Record<string, string[]> },
    status: 400 | 409,
    item?: Item,
  ) {
    return renderPage(
      c,
      <ItemFormPage page={pageContext(c)} values={values} errors={errors} item={item} />,
      status,
    );
  }

  function duplicateSku(c: Context<AppEnv>, error: unknown, values: ItemFormValues, item?: Item) {
    if (!(error instanceof DuplicateSkuError)) throw error;
    const errors = { formErrors: [], fieldErrors: { sku: ["Another item has this SKU"] } };
    return formPage(c, values, errors, 409, item);
  }

  return routes;
}
