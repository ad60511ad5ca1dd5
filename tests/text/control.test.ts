import { describe, expect, test } from "bun:test";
import { escapeControl, stripControl } from "../../lib/text/control.ts";

describe("stripControl()", () => {
  test("removes escape sequences' ESC, BEL and other C0 controls, keeping tab and newline", () => {
    expect(stripControl("a\u001b[31mb\u0007c\u0000d\te\nf")).toBe("a[31mbcd\te\nf");
  });

  test("removes DEL and C1 controls, including the 8-bit CSI", () => {
    expect(stripControl("x\u007fy\u0085z\u009b2J")).toBe("xyz2J");
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
