import type { Format } from "../config.ts";
import { type HtmlOptions, htmlRenderer } from "./html.ts";
import { jsonRenderer } from "./json.ts";
import { markdownRenderer } from "./markdown.ts";
import type { Renderer } from "./types.ts";

export function createRenderer(format: Format, options: HtmlOptions = {}): Renderer {
  if (format === "json") return jsonRenderer();
  if (format === "html") return htmlRenderer(options);
  return markdownRenderer(options);
}
