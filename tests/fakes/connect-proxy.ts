import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";

/** One request a proxy was asked to carry: its method and target, and whether it could log in. */
export interface ProxiedRequest {
  method: string;
  /** `host:port` for CONNECT, the absolute URL for a plain http request. */
  target: string;
  authorized: boolean;
}

/**
 * A forward proxy on 127.0.0.1, port 0, as a corporate one: every request needs
 * `Proxy-Authorization: Basic` with `user:password` (else 407); CONNECT host:port tunnels
 * (https destinations), an absolute-form request is passed on (http ones). It resolves names by
 * its own table (`hosts`, name → address; an address is used as is), so a test can see that the
 * name, not the worker's checked address, is what reaches it; a name it does not know is 502.
 * With `tls` (a certificate and key) it is an https proxy: the client speaks TLS to it first.
 */
export async function startConnectProxy(options: {
  user: string;
  password: string;
  hosts?: Record<string, string>;
  tls?: { cert: string; key: string };
}) {
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();
  const expected = `Basic ${Buffer.from(`${options.user}:${options.password}`).toString("base64")}`;
  const addressOf = (host: string) =>
    options.hosts?.[host] ?? (/^[\d.]+$/.test(host) ? host : undefined);
  const onClient = (client: Socket) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      client.off("data", onData);
      const lines = head.subarray(0, end).toString("latin1").split("\r\n");
      const [method = "", target = ""] = (lines[0] ?? "").split(" ");
      const auth = lines.find((line) => /^proxy-authorization:/i.test(line));
      const authorized = auth?.replace(/^proxy-authorization:\s*/i, "") === expected;
      requests.push({ method, target, authorized });
      if (!authorized) {
        client.end(
          'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
        );
        return;
      }
      const isConnect = method === "CONNECT";
      const url = isConnect ? new URL(`http://${target}`) : new URL(target);
      const address = addressOf(url.hostname);
      if (address === undefined) {
        client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
      }
      const upstream = connect(Number(url.port || 80), address, () => {
        if (isConnect) client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        // A plain request goes on as it came, Proxy-Authorization left out.
        else
          upstream.write(
            Buffer.from(`${lines.filter((line) => line !== auth).join("\r\n")}\r\n\r\n`, "latin1"),
          );
        const rest = head.subarray(end + 4);
        if (rest.length > 0) upstream.write(rest);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      upstream.on("error", () => client.destroy());
    };
    client.on("data", onData);
  };
  const server: Server = options.tls
    ? createTlsServer(options.tls, onClient)
    : createServer(onClient);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const credentials = `${encodeURIComponent(options.user)}:${encodeURIComponent(options.password)}`;
  return {
    port,
    requests,
    /** The proxy's URL with its credentials, as WEBHOOK_PROXY_URL. */
    url: `${options.tls ? "https" : "http"}://${credentials}@127.0.0.1:${port}`,
    /** The proxy's URL with a wrong password. */
    wrongUrl: `http://${encodeURIComponent(options.user)}:wrong@127.0.0.1:${port}`,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type ConnectProxy = Awaited<ReturnType<typeof startConnectProxy>>;
