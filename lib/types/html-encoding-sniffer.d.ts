// html-encoding-sniffer (jsdom's implementation of the HTML encoding sniffing algorithm) ships
// no types of its own; this is the part the digest uses.
declare module "html-encoding-sniffer" {
  export default function sniffHtmlEncoding(
    bytes: Uint8Array,
    options?: {
      transportLayerEncodingLabel?: string;
      defaultEncoding?: string;
      maxPrescanBytes?: number;
      xml?: boolean;
    },
  ): string;
}
