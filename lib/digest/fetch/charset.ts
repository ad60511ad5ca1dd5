import sniffHtmlEncoding from "html-encoding-sniffer";

/** The HTML spec looks for a <meta> charset in the first 1024 bytes. */
const PRESCAN_BYTES = 1024;
/**
 * A browser that meets a <meta> charset later in the <head> (after long inline scripts, say)
 * re-decodes the page with it; a second, wider look stands in for that.
 */
const LATE_META_BYTES = 64 * 1024;

/**
 * Decodes an HTML page as a browser would: a byte order mark first, then the charset of the
 * Content-Type header, then a <meta> charset, then UTF-8. Labels follow the WHATWG Encoding
 * Standard (iso-8859-1 means windows-1252, sjis means shift_jis); Bun's TextDecoder decodes them.
 */
export function decodeHtml(bytes: Uint8Array, contentType: string | null): string {
  return new TextDecoder(htmlEncoding(bytes, contentType)).decode(bytes);
}

/** The WHATWG name of the encoding `decodeHtml` uses. */
export function htmlEncoding(bytes: Uint8Array, contentType: string | null): string {
  const transport = charsetParameter(contentType);
  let encoding = sniffHtmlEncoding(bytes, {
    transportLayerEncodingLabel: transport,
    defaultEncoding: "",
    maxPrescanBytes: PRESCAN_BYTES,
  });
  if (encoding === "") {
    encoding = sniffHtmlEncoding(bytes, {
      defaultEncoding: "UTF-8",
      maxPrescanBytes: LATE_META_BYTES,
    });
  }
  return decodable(encoding) ? encoding : "UTF-8";
}

function charsetParameter(contentType: string | null): string | undefined {
  return /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? "")?.[1];
}

function decodable(encoding: string): boolean {
  try {
    new TextDecoder(encoding);
    return true;
  } catch {
    return false;
  }
}
