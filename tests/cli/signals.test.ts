import { describe, expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import { stopSignals } from "../../lib/cli/signals.ts";

function fakeProcess() {
  const emitter = new EventEmitter();
  let time = 0;
  return {
    source: emitter,
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
    emit: (name: string) => emitter.emit(name),
    listeners: () => emitter.listenerCount("SIGINT") + emitter.listenerCount("SIGTERM"),
  };
}

describe("stopSignals()", () => {
  test("the first signal stops gracefully and resolves `stopped` with its name", async () => {
    const fake = fakeProcess();
    const signals = stopSignals({ source: fake.source, now: fake.now });
    fake.emit("SIGTERM");
    expect(signals.stop.aborted).toBe(true);
    expect(signals.abort.aborted).toBe(false);
    expect(await signals.stopped).toBe("SIGTERM");
  });

  test("signals within the window count as the same keypress; a later one aborts", () => {
    const fake = fakeProcess();
    const repeats: string[] = [];
    const signals = stopSignals({
      source: fake.source,
      now: fake.now,
      windowMs: 1000,
      onRepeat: (name) => repeats.push(name),
    });
    fake.emit("SIGINT");
    fake.advance(5);
    fake.emit("SIGINT");
    fake.advance(990);
    fake.emit("SIGTERM");
    expect(signals.abort.aborted).toBe(false);
    expect(repeats).toEqual(["SIGINT", "SIGTERM"]);
    fake.advance(5);
    fake.emit("SIGINT");
    expect(signals.abort.aborted).toBe(true);
    // After the abort the listeners are gone: a third signal ends the process the default way.
    expect(fake.listeners()).toBe(0);
  });

  test("a stop that ends within the window keeps taking its keypress's late copy as the same one", () => {
    const fake = fakeProcess();
    const scheduled: Array<{ fn: () => void; ms: number }> = [];
    const signals = stopSignals({
      source: fake.source,
      now: fake.now,
      windowMs: 1000,
      later: (fn, ms) => scheduled.push({ fn, ms }),
    });
    fake.emit("SIGINT");
    fake.advance(150);
    signals.dispose(); // the command is done, 150 ms after the keypress
    expect(fake.listeners()).toBe(2);
    fake.advance(10);
    fake.emit("SIGINT"); // `bun run`'s forwarded copy: no default action, no abort
    expect(signals.abort.aborted).toBe(false);
    expect(scheduled.map((each) => each.ms)).toEqual([850]);
    scheduled[0]?.fn();
    expect(fake.listeners()).toBe(0);
  });

  test("dispose() removes the listeners", () => {
    const fake = fakeProcess();
    const signals = stopSignals({ source: fake.source, now: fake.now });
    expect(fake.listeners()).toBe(2);
    signals.dispose();
    expect(fake.listeners()).toBe(0);
    expect(signals.stop.aborted).toBe(false);
  });
});
