import { describe, expect, test } from "bun:test";
import { escapeControl, stripControl } from "../../lib/text/control.ts";

describe("stripControl()", () => {
  test("removes whole CSI sequences, not just their ESC", () => {
    expect(stripControl("a\u001b[31mred\u001b[0m \u001b[2J\u001b[1;31;42mx\u001b[?25l")).toBe(
      "ared x",
    );
    expect(stripControl("8-bit \u009b2Jcsi")).toBe("8-bit csi");
  });

  test("removes OSC sequences whole: titles and OSC 8 hyperlinks, BEL or ST terminated", () => {
    const link = "\u001b]8;;https://evil.example/\u001b\\click here\u001b]8;;\u001b\\";
    expect(stripControl(`see ${link} now`)).toBe("see click here now");
    expect(stripControl("t\u001b]0;pwned\u0007itle")).toBe("title");
    expect(stripControl("c1 \u009d8;;https://x\u009clink\u009d8;;\u009c")).toBe("c1 link");
  });

  test("removes an unterminated OSC to the end of its line, as a terminal would swallow it", () => {
    expect(stripControl("ok \u001b]8;;https://evil.example/ rest\nnext line")).toBe(
      "ok \nnext line",
    );
  });

  test("removes DCS, APC and two-byte escapes, and the other C0 and C1 controls", () => {
    expect(stripControl("a\u001bPq#0;2;0;0;0\u001b\\b\u001b_apc\u001b\\c")).toBe("abc");
    expect(stripControl("x\u001b7y\u001b(Bz\u001bc!")).toBe("xyz!");
    expect(stripControl("a\u0007b\u0000c\u007fd\u0085e\tf\ng")).toBe("abcde\tf\ng");
  });

  test("turns carriage returns into newlines so text cannot overwrite a line", () => {
    expect(stripControl("safe\rEVIL\r\nnext")).toBe("safe\nEVIL\nnext");
  });

  test("removes bidirectional overrides", () => {
    expect(stripControl("abc\u202edcba\u2066x\u2069")).toBe("abcdcbax");
  });

  test("leaves ordinary Unicode alone", () => {
    expect(stripControl("Café · 日本語 — ok")).toBe("Café · 日本語 — ok");
  });
});

describe("escapeControl()", () => {
  test("shows controls as visible escapes", () => {
    expect(escapeControl("a\u001bb\u202ec\td\r\ne")).toBe("a\\x1bb\\u202ec\td\ne");
  });
});
