/**
 * Sends `text` as is over a fresh TCP connection to 127.0.0.1:`port` and returns everything the
 * server wrote until it closed the connection: for requests fetch() refuses to make (HTTP/1.0
 * without Host, a forged Host header, a malformed request line).
 */
export function rawHttp(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const decoder = new TextDecoder();
    let received = "";
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(socket) {
          socket.write(text);
        },
        data(_socket, chunk) {
          received += decoder.decode(chunk, { stream: true });
        },
        close() {
          resolve(received);
        },
        error(_socket, error) {
          reject(error);
        },
      },
    }).catch(reject);
  });
}

/** The status code of a raw HTTP response, or 0 when there is none. */
export function statusOf(response: string): number {
  return Number(/^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1] ?? 0);
}

/** The body of a raw HTTP response (after the blank line). */
export function bodyOf(response: string): string {
  const start = response.indexOf("\r\n\r\n");
  return start === -1 ? "" : response.slice(start + 4);
}
