/**
 * close() of the PostgreSQL change listener while its LISTEN connection is still being made (a
 * slow or loaded server): the attempt is cut, not waited for. It used to wait out the client's
 * 5 s connection timeout, past a test's hook timeout on a loaded machine.
 */
import { expect, test } from "bun:test";
import { createServer, type Socket } from "node:net";
import { createChangeListener } from "../../lib/store/postgres/changes.ts";
import { gate } from "../fakes/webhook-endpoint.ts";

test("close() while LISTEN is connecting cuts the attempt at once", async () => {
  // A server that takes the connection and never answers PostgreSQL's start-up message.
  const open = new Set<Socket>();
  const { open: connected, promise: arrived } = gate();
  const server = createServer((socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    connected();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  try {
    const changes = createChangeListener(`postgres://u:p@127.0.0.1:${port}/db`, {
      pollIntervalMs: 10,
    });
    await changes.wait({ timeoutMs: 10 }); // starts the LISTEN connection
    await arrived;
    const started = performance.now();
    await changes.close();
    // Well inside the client's 5 s connection timeout, which close() used to wait out.
    expect(performance.now() - started).toBeLessThan(2500);
    expect(changes.listening).toBe(false);
  } finally {
    for (const socket of open) socket.destroy();
    server.close();
  }
}, 4000);
