import type { Format } from "../config.ts";
import { htmlRenderer } from "./html.ts";
import { jsonRenderer } from "./json.ts";
import { markdownRenderer } from "./markdown.ts";
import type { Renderer } from "./types.ts";

export function createRenderer(format: Format): Renderer {
  if (format === "json") return jsonRenderer();
  if (format === "html") return htmlRenderer();
  return markdownRenderer();
}
