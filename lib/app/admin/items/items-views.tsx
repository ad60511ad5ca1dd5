/** @jsxImportSource hono/jsx */
import type { Child } from "hono/jsx";
import type { Item } from "../../../inventory/model.ts";
import type { FieldErrors as Errors } from "../../../inventory/schemas.ts";
import { BACKGROUND_TASKS } from "../background-tasks/background-tasks-views.tsx";
import { CsrfField, FieldErrors, Layout, type PageContext, PostButton } from "../layout.tsx";
import type { ItemFormValues } from "./item-form.ts";

export const ITEMS = "/admin/items";

export function ItemListPage(props: {
  page: PageContext;
  items: Item[];
  pageNumber: number;
  pageCount: number;
  total: number;
}) {
  const { page, pageNumber, pageCount } = props;
  return (
    <Layout title="Items" page={page}>
      <h1>Items</h1>
      <div class="actions">
        <a class="button" href={`${ITEMS}/new`}>
          New item
        </a>
        <span class="muted">
          Every change queues a delivery to each subscribed webhook: watch it in{" "}
          <a href={BACKGROUND_TASKS}>Background Tasks</a>.
        </span>
      </div>
      {props.items.length === 0 ? (
        <p class="empty">No items{props.total > 0 ? " on this page" : " yet"}.</p>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>SKU</th>
              <th>Name</th>
              <th class="num">Quantity</th>
              <th>Location</th>
              <th>Updated</th>
            </tr>
          </thead>
          <tbody>
            {props.items.map((item) => (
              <tr id={`item-${item.id}`}>
                <td>
                  <a href={`${ITEMS}/${item.id}`}>{item.sku}</a>
                </td>
                <td class="wrap" data-label="Name">
                  {item.name}
                </td>
                <td class="num" data-label="Quantity">
                  {item.quantity}
                </td>
                <td class="wrap" data-label="Location">
                  {item.location}
                </td>
                <td data-label="Updated">{item.updatedAt.slice(0, 19).replace("T", " ")} UTC</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="pager">
        {pageNumber > 1 ? <a href={`${ITEMS}?page=${pageNumber - 1}`}>‹ Newer</a> : null}
        {pageCount > 1 ? (
          <span class="muted">
            Page {pageNumber} of {pageCount} ({props.total} items)
          </span>
        ) : null}
        {pageNumber < pageCount ? <a href={`${ITEMS}?page=${pageNumber + 1}`}>Older ›</a> : null}
      </div>
    </Layout>
  );
}

export function ItemFormPage(props: {
  page: PageContext;
  values: ItemFormValues;
  errors?: Errors;
  item?: Item;
  /** Shown between the form and Delete (the item's deliveries). */
  children?: Child;
}) {
  const { page, values, item } = props;
  const errors = props.errors?.fieldErrors ?? {};
  const title = item ? `Item ${item.sku}` : "New item";
  return (
    <Layout title={title} page={page}>
      <p>
        <a href={ITEMS}>← Items</a>
      </p>
      <h1>{title}</h1>
      {props.errors ? (
        <p class="error-box" role="alert">
          {[...props.errors.formErrors, "Please correct the fields marked below."].join(" ")}
        </p>
      ) : null}
      <form method="post" action={item ? `${ITEMS}/${item.id}` : ITEMS} class="stacked">
        <CsrfField token={page.csrfToken} />
        <label>
          SKU
          <input type="text" name="sku" value={values.sku} required maxlength={64} />
          <FieldErrors messages={errors.sku} />
        </label>
        <label>
          Name
          <input type="text" name="name" value={values.name} required maxlength={200} />
          <FieldErrors messages={errors.name} />
        </label>
        <label>
          Quantity
          <input type="number" name="quantity" value={values.quantity} min={0} step={1} required />
          <FieldErrors messages={errors.quantity} />
        </label>
        <label>
          Location
          <input type="text" name="location" value={values.location} maxlength={200} />
          <FieldErrors messages={errors.location} />
        </label>
        <div class="actions">
          <button type="submit" class="primary">
            {item ? "Save" : "Create item"}
          </button>
        </div>
      </form>
      {props.children}
      {item ? (
        <>
          <h2>Delete</h2>
          <PostButton
            action={`${ITEMS}/${item.id}/delete`}
            label="Delete item"
            csrfToken={page.csrfToken}
            danger
          />
        </>
      ) : null}
    </Layout>
  );
}
