/**
 * Reads Prometheus text exposition back into samples, keyed `name{a="1",b="2"}` with labels in
 * sorted order (`name` alone without labels), so tests compare what a scraper would see.
 */
export function parsePrometheusText(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`Not a sample line: ${line}`);
    const [, name, labelText, value] = match;
    const labels = [...(labelText ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)]
      .map(([, key, v]) => `${key}="${v}"`)
      .sort();
    const key = labels.length ? `${name}{${labels.join(",")}}` : `${name}`;
    samples.set(key, value === "+Inf" ? Infinity : Number(value));
  }
  return samples;
}

/** The samples of one metric family, keyed as above. */
export function family(samples: Map<string, number>, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of samples) {
    if (key === name || key.startsWith(`${name}{`)) out[key] = value;
  }
  return out;
}
