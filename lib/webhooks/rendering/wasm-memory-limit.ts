/**
 * A WebAssembly module's own memory given a maximum: the engine's allocations beyond it fail
 * inside the module (a Rust allocation failure: the instance traps) instead of growing the
 * process by gigabytes. The binary format: after the 8-byte header, sections of (id, LEB128
 * size, content); the memory section (id 5) holds a vector of limits (flag 0: min; 1: min, max).
 */

const PAGE_BYTES = 65_536;
const MEMORY_SECTION = 5;

export function withMemoryLimit(module: Uint8Array, maxBytes: number): Uint8Array<ArrayBuffer> {
  const maxPages = Math.floor(maxBytes / PAGE_BYTES);
  let at = 8;
  while (at < module.length) {
    const start = at;
    const id = module[at++];
    const [size, content] = readLeb(module, at);
    const end = content + size;
    if (id === MEMORY_SECTION) {
      const [count, limits] = readLeb(module, content);
      if (count !== 1) throw new Error(`Expected one memory, found ${count}`);
      const flag = module[limits] ?? 0;
      const [minPages, afterMin] = readLeb(module, limits + 1);
      const afterLimits = flag & 1 ? readLeb(module, afterMin)[1] : afterMin;
      const body = [
        ...leb(1),
        1,
        ...leb(minPages),
        ...leb(Math.max(minPages, maxPages)),
        ...module.subarray(afterLimits, end),
      ];
      const patched = new Uint8Array(
        module.length - (end - start) + 1 + leb(body.length).length + body.length,
      );
      patched.set(module.subarray(0, start), 0);
      patched.set([MEMORY_SECTION, ...leb(body.length), ...body], start);
      patched.set(module.subarray(end), start + 1 + leb(body.length).length + body.length);
      return patched;
    }
    at = end;
  }
  throw new Error("No memory section in the WebAssembly module");
}

function readLeb(bytes: Uint8Array, from: number): [number, number] {
  let value = 0;
  let shift = 0;
  let at = from;
  for (;;) {
    const byte = bytes[at++] ?? 0;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return [value, at];
  }
}

function leb(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    let byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    out.push(byte);
  } while (rest > 0);
  return out;
}
