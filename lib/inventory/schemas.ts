import { z } from "zod";
import { invisibleCharacter } from "../text/control.ts";

/**
 * Text a person types into one line: trimmed, bounded, no control or invisible characters (a
 * BiDi override would make a name read differently from what it is, in the admin and in
 * every receiver's log).
 */
function lineOfText(max: number) {
  return z
    .string()
    .trim()
    .max(max, `Must be at most ${max} characters`)
    .superRefine((value, ctx) => {
      const found = invisibleCharacter(value);
      if (found !== null) {
        ctx.addIssue({
          code: "custom",
          message: `Must not contain control or invisible characters (${found} found)`,
        });
      }
    });
}

export const itemFields = {
  sku: lineOfText(64).pipe(z.string().min(1, "Required")),
  name: lineOfText(200).pipe(z.string().min(1, "Required")),
  quantity: z
    .number({ error: "Must be a whole number" })
    .int("Must be a whole number")
    .min(0, "Must be 0 or more")
    .max(1_000_000_000, "Must be at most 1000000000"),
  location: lineOfText(200),
};

/** A stored item's fields (lib/inventory/model.ts's Item): the API's answer, a change's snapshot. */
export const storedItemFields = {
  id: z.int().min(1),
  sku: itemFields.sku,
  name: itemFields.name,
  quantity: itemFields.quantity,
  location: itemFields.location,
  updatedAt: z.iso.datetime().describe("when it last changed (ISO 8601)"),
};

/** POST /api/items and the admin's new-item form; unknown keys (id, updatedAt, …) are errors. */
export const newItemSchema = z.strictObject({
  sku: itemFields.sku,
  name: itemFields.name,
  quantity: itemFields.quantity,
  location: itemFields.location.default(""),
});

/** PATCH /api/items/:id: any subset of the fields. */
export const itemPatchSchema = z.strictObject({
  sku: itemFields.sku.optional(),
  name: itemFields.name.optional(),
  quantity: itemFields.quantity.optional(),
  location: itemFields.location.optional(),
});

/** The compact error shape both the API and the admin forms use. */
export interface FieldErrors {
  formErrors: string[];
  fieldErrors: Record<string, string[]>;
}

export function fieldErrorsOf(error: z.ZodError): FieldErrors {
  const flat = z.flattenError(error);
  const fieldErrors: Record<string, string[]> = {};
  for (const [key, messages] of Object.entries(flat.fieldErrors)) {
    if (Array.isArray(messages) && messages.length > 0) fieldErrors[key] = messages as string[];
  }
  return { formErrors: flat.formErrors, fieldErrors };
}
