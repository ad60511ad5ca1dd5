/**
 * A fake web site serving the articles stories link to, on 127.0.0.1, port 0, with the ways
 * real sites fail: 403, no answer, a PDF, a body too big (streamed without a length), plain text.
 */

export interface Page {
  status?: number;
  contentType?: string;
  body?: string;
  /** Raw bytes instead of `body` (pages in legacy encodings). */
  bytes?: Uint8Array<ArrayBuffer>;
  /** Never answer (until the client gives up). */
  hang?: boolean;
  /** Stream this many bytes of HTML without a Content-Length. */
  streamBytes?: number;
  /** Answer 302 with this Location. */
  redirect?: string;
}

/** `count` paragraphs of plain text, an article long enough for Readability to keep as such. */
export function articleParagraphs(count = 10): string[] {
  return Array.from(
    { length: count },
    (_, i) => `Paragraph ${i + 1} of an article long enough for Readability to keep it.`,
  );
}

/** A readable article page with navigation around it, as Readability expects to meet it. */
export function articleHtml(title: string, paragraphs: string[]): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>${title}</h1>
${paragraphs.map((p) => `<p>${p}</p>`).join("\n")}
</article>
<footer>Copyright example.com</footer>
</body></html>`;
}

/** windows-1252 (what iso-8859-1 means on the web) bytes of Latin-1 text. */
export function latin1Bytes(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(text, (ch) => {
    const code = ch.charCodeAt(0);
    if (code > 0xff) throw new Error(`not Latin-1: ${ch}`);
    return code;
  });
}

/**
 * Shift_JIS bytes of text made of ASCII, hiragana, 、。 and 日本語 (hiragana sit in one run,
 * U+3041–U+3093 at 0x829F–0x82F1), enough for a page no UTF-8 decoder reads right.
 */
export function shiftJisBytes(text: string): Uint8Array<ArrayBuffer> {
  const fixed: Record<string, number[]> = {
    "、": [0x81, 0x41],
    "。": [0x81, 0x42],
    日: [0x93, 0xfa],
    本: [0x96, 0x7b],
    語: [0x8c, 0xea],
  };
  const out: number[] = [];
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (code < 0x80) out.push(code);
    else if (fixed[ch]) out.push(...(fixed[ch] ?? []));
    else if (code >= 0x3041 && code <= 0x3093) {
      const sjis = 0x829f + (code - 0x3041);
      out.push(sjis >> 8, sjis & 0xff);
    } else throw new Error(`no Shift_JIS byte for ${ch} in this fake`);
  }
  return Uint8Array.from(out);
}

/** A page that shows only an error until its JavaScript runs, as single-page apps do. */
export function javascriptWallHtml(description?: string): string {
  return `<!doctype html><html><head><title>App</title>${
    description ? `<meta name="description" content="${description}">` : ""
  }</head><body><div id="root"><noscript>You need to enable JavaScript to run this app.</noscript>
<div class="error"><h1>Something went wrong.</h1><p>Something went wrong, but don't fret — let's give it another shot.</p></div></div>
<script src="/app.js"></script></body></html>`;
}

/** A news page showing two paragraphs and a subscription prompt, marked up as paywalled. */
export function paywallTeaserHtml(description: string): string {
  return `<!doctype html><html><head><title>Big news</title>
<meta property="og:description" content="${description}">
<script type="application/ld+json">{"@type":"NewsArticle","isAccessibleForFree":false}</script>
</head><body><article><h1>Big news</h1>
<p>The first paragraph of the story sets the scene in a few sentences, naming the people involved and what happened to them this week.</p>
<p>The second paragraph begins to explain why it matters, and then the text stops for readers who have not paid.</p>
<div class="paywall"><p>Subscribe to continue reading. Already a subscriber? Sign in.</p></div>
</article></body></html>`;
}

/** A video page: the player, then the site's footer links, which Readability takes for content. */
export function videoPageHtml(description: string): string {
  const footer = [
    "About",
    "Press",
    "Copyright",
    "Contact us",
    "Creators",
    "Advertise",
    "Developers",
    "Terms",
    "Privacy",
    "Policy & Safety",
    "How it works",
    "Test new features",
  ]
    .map((label) => `<a href="/${label.toLowerCase().replace(/\W+/g, "-")}">${label}</a>`)
    .join(" ");
  return `<!doctype html><html><head><title>A talk</title>
<meta property="og:type" content="video.other"><meta name="description" content="${description}">
</head><body><div id="player"><video src="/v.mp4"></video></div><div id="footer"><p>${footer}</p></div></body></html>`;
}

export interface FakeArticleSite {
  url: string;
  /** Paths requested, in arrival order. */
  requests: string[];
  /** The Host header of each request. */
  hosts: (string | null)[];
  userAgents: (string | null)[];
  stop(): void;
  [Symbol.dispose](): void;
}

export function startFakeArticleSite(
  pages: Record<string, Page>,
  options: { latencyMs?: number; onRequest?: (path: string) => void } = {},
): FakeArticleSite {
  const requests: string[] = [];
  const hosts: (string | null)[] = [];
  const userAgents: (string | null)[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const path = new URL(request.url).pathname;
      requests.push(path);
      hosts.push(request.headers.get("host"));
      userAgents.push(request.headers.get("user-agent"));
      options.onRequest?.(path);
      if (options.latencyMs) await Bun.sleep(options.latencyMs);
      const page = pages[path];
      if (!page) return new Response("Not found", { status: 404 });
      if (page.redirect) {
        return new Response(null, { status: 302, headers: { location: page.redirect } });
      }
      if (page.hang) {
        return new Promise<Response>((resolve) => {
          request.signal.addEventListener("abort", () => resolve(new Response(null)));
        });
      }
      const headers: Record<string, string> = {
        "content-type": page.contentType ?? "text/html; charset=utf-8",
      };
      if (page.streamBytes !== undefined) {
        const total = page.streamBytes;
        const chunk = new TextEncoder().encode(`<p>${"x".repeat(16_376)}</p>`);
        let sent = 0;
        const stream = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= total) return controller.close();
            controller.enqueue(chunk);
            sent += chunk.byteLength;
          },
        });
        return new Response(stream, { status: page.status ?? 200, headers });
      }
      return new Response(page.bytes ?? page.body ?? "", { status: page.status ?? 200, headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    hosts,
    userAgents,
    stop: () => server.stop(true),
    [Symbol.dispose]: () => server.stop(true),
  };
}
