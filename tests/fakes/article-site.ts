/**
 * A fake web site serving the articles stories link to, on 127.0.0.1, port 0, with the ways
 * real sites fail: 403, no answer, a PDF, a body too big (streamed without a length), plain text.
 */

export interface Page {
  status?: number;
  contentType?: string;
  body?: string;
  /** Never answer (until the client gives up). */
  hang?: boolean;
  /** Stream this many bytes of HTML without a Content-Length. */
  streamBytes?: number;
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

export interface FakeArticleSite {
  url: string;
  /** Paths requested, in arrival order. */
  requests: string[];
  userAgents: (string | null)[];
  stop(): void;
  [Symbol.dispose](): void;
}

export function startFakeArticleSite(
  pages: Record<string, Page>,
  options: { latencyMs?: number; onRequest?: (path: string) => void } = {},
): FakeArticleSite {
  const requests: string[] = [];
  const userAgents: (string | null)[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const path = new URL(request.url).pathname;
      requests.push(path);
      userAgents.push(request.headers.get("user-agent"));
      options.onRequest?.(path);
      if (options.latencyMs) await Bun.sleep(options.latencyMs);
      const page = pages[path];
      if (!page) return new Response("Not found", { status: 404 });
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
      return new Response(page.body ?? "", { status: page.status ?? 200, headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    userAgents,
    stop: () => server.stop(true),
    [Symbol.dispose]: () => server.stop(true),
  };
}
