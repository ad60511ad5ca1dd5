/** How many bytes of a binary body the receiver shows. */
export const HEX_PREVIEW_BYTES = 256;

/**
 * A `hexdump -C` style preview of the first bytes: offset, 16 bytes in hex, and the printable
 * ASCII ones (everything else as `.`, so nothing reaches the terminal as a control character).
 */
export function hexPreview(bytes: Uint8Array, limit: number = HEX_PREVIEW_BYTES): string {
  const shown = bytes.subarray(0, limit);
  const lines: string[] = [];
  for (let offset = 0; offset < shown.length; offset += 16) {
    const row = [...shown.subarray(offset, offset + 16)];
    const hex = row.map((byte) => byte.toString(16).padStart(2, "0"));
    const left = hex.slice(0, 8).join(" ").padEnd(23);
    const right = hex.slice(8).join(" ").padEnd(23);
    const ascii = row
      .map((byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : "."))
      .join("");
    lines.push(`${offset.toString(16).padStart(8, "0")}  ${left}  ${right}  |${ascii}|`);
  }
  return lines.join("\n");
}
