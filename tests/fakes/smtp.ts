/**
 * A real SMTP server in the test process (the smtp-server package) on 127.0.0.1, port 0: it
 * takes one user's password (or, without one, no login at all), offers STARTTLS with the hook.test certificate when asked to, and
 * keeps each message as received, with whether the session was encrypted by then.
 */
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { HOOK_TEST_CERT_FILE, TLS_DIR } from "./tls-hook-server.ts";

export interface ReceivedMail {
  raw: string;
  from: string | undefined;
  to: string[];
  /** TLS was on when the message was sent (STARTTLS, or smtps). */
  secure: boolean;
  user: string | undefined;
}

export async function startFakeSmtp(options: {
  /** The one login it takes; without it, a relay that needs none (and refuses every login). */
  user?: string;
  password?: string;
  starttls?: boolean;
}) {
  const mails: ReceivedMail[] = [];
  const cert = await Bun.file(HOOK_TEST_CERT_FILE).text();
  const key = await Bun.file(join(TLS_DIR, "hook-test.key")).text();
  const server = new SMTPServer({
    secure: false,
    ...(options.starttls ? { key, cert } : { disabledCommands: ["STARTTLS"] }),
    // Plain AUTH over a plain connection, for the tests without STARTTLS.
    allowInsecureAuth: true,
    authOptional: options.user === undefined,
    logger: false,
    onAuth(auth, _session, callback) {
      if (
        options.user !== undefined &&
        auth.username === options.user &&
        auth.password === options.password
      ) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error("Invalid username or password"));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        mails.push({
          raw: Buffer.concat(chunks).toString("utf8"),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          secure: session.secure,
          user: typeof session.user === "string" ? session.user : undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  const stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { port, mails, cert, stop };
}

/** A port on 127.0.0.1 where nothing listens any more: an SMTP server that is down. */
export async function closedPort(): Promise<number> {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}
