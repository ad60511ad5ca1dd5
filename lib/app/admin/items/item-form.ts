import { z } from "zod";
import type { Item, NewItem } from "../../../inventory/model.ts";
import { type FieldErrors, fieldErrorsOf, itemFields } from "../../../inventory/schemas.ts";

/** The item form as typed (all text), to show again with its errors. */
export interface ItemFormValues {
  sku: string;
  name: string;
  quantity: string;
  location: string;
}

export function emptyItemForm(): ItemFormValues {
  return { sku: "", name: "", quantity: "0", location: "" };
}

export function itemFormValues(item: Item): ItemFormValues {
  return {
    sku: item.sku,
    name: item.name,
    quantity: String(item.quantity),
    location: item.location,
  };
}

export function readItemForm(body: Record<string, unknown>): ItemFormValues {
  const text = (key: string) => (typeof body[key] === "string" ? (body[key] as string) : "");
  return {
    sku: text("sku"),
    name: text("name"),
    quantity: text("quantity"),
    location: text("location"),
  };
}

/** The API's field rules, with the quantity typed as text. */
const itemFormSchema = z.object({
  sku: itemFields.sku,
  name: itemFields.name,
  quantity: z
    .string()
    .trim()
    .regex(/^\d{1,10}$/, "Must be a whole number, 0 or more")
    .transform(Number)
    .pipe(itemFields.quantity),
  location: itemFields.location,
});

export function parseItemForm(
  values: ItemFormValues,
): { ok: true; item: NewItem } | { ok: false; errors: FieldErrors } {
  const result = itemFormSchema.safeParse(values);
  return result.success
    ? { ok: true, item: result.data }
    : { ok: false, errors: fieldErrorsOf(result.error) };
}
