import { describe, expect, test } from "bun:test";
import { formatRequest, type ReceivedRequest } from "../../lib/receiver/format.ts";
import { stripControl } from "../../lib/text/control.ts";

const encode = (text: string) => new TextEncoder().encode(text);

function request(overrides: Partial<ReceivedRequest> = {}): ReceivedRequest {
  const body = overrides.body ?? encode('{"foo": "bar"}');
  return {
    counter: 1,
    date: new Date("2020-04-07T17:44:02Z"),
    clientAddress: "127.0.0.1",
    method: "POST",
    target: "/",
    headers: [
      ["host", "localhost:9000"],
      ["user-agent", "curl/7.58.0"],
      ["accept", "*/*"],
      ["content-length", "14"],
      ["content-type", "application/x-www-form-urlencoded"],
    ],
    size: body.length,
    ...overrides,
    body,
  };
}

const SHOW = { showHeaders: true, pretty: false };

describe("formatRequest()", () => {
  test("prints NetBox's block for a POST byte for byte", () => {
    expect(formatRequest(request(), SHOW)).toBe(
      [
        '[1] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "POST / HTTP/1.1" 200 -',
        "host: localhost:9000",
        "user-agent: curl/7.58.0",
        "accept: */*",
        "content-length: 14",
        "content-type: application/x-www-form-urlencoded",
        "",
        '{"foo": "bar"}',
        "------------",
      ].join("\n"),
    );
  });

  test("prints (No body) for a request without a body, with path and query", () => {
    const get = request({
      counter: 12,
      method: "GET",
      target: "/hooks/a?x=1&y=2",
      headers: [["host", "localhost:9000"]],
      body: new Uint8Array(0),
    });
    expect(formatRequest(get, SHOW)).toBe(
      [
        '[12] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "GET /hooks/a?x=1&y=2 HTTP/1.1" 200 -',
        "host: localhost:9000",
        "",
        "(No body)",
        "------------",
      ].join("\n"),
    );
  });

  test("leaves out the headers and their blank line with showHeaders false", () => {
    expect(formatRequest(request(), { showHeaders: false, pretty: false })).toBe(
      [
        '[1] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "POST / HTTP/1.1" 200 -',
        '{"foo": "bar"}',
        "------------",
      ].join("\n"),
    );
  });

  test("pretty-prints a JSON body with pretty true and leaves other bodies alone", () => {
    const json = request({ headers: [], body: encode('{"a":[1,{"b":null}],"c":{}}') });
    expect(formatRequest(json, { showHeaders: false, pretty: true })).toBe(
      [
        '[1] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "POST / HTTP/1.1" 200 -',
        "{",
        '  "a": [',
        "    1,",
        "    {",
        '      "b": null',
        "    }",
        "  ],",
        '  "c": {}',
        "}",
        "------------",
      ].join("\n"),
    );
    const form = request({ headers: [], body: encode("a=1&b=2") });
    expect(formatRequest(form, { showHeaders: false, pretty: true })).toContain("\na=1&b=2\n");
  });

  test("shows a binary body's size and a hex preview", () => {
    const png = Uint8Array.from([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
      0x52, 0x00, 0x00, 0x00, 0x01,
    ]);
    expect(
      formatRequest(request({ headers: [], body: png }), { ...SHOW, showHeaders: false }),
    ).toBe(
      [
        '[1] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "POST / HTTP/1.1" 200 -',
        "(binary body: 20 bytes)",
        "00000000  89 50 4e 47 0d 0a 1a 0a  00 00 00 0d 49 48 44 52  |.PNG........IHDR|",
        "00000010  00 00 00 01                                       |....|",
        "------------",
      ].join("\n"),
    );
  });

  test("treats valid UTF-8 with a NUL byte as binary and previews only the first 256 bytes", () => {
    const bytes = new Uint8Array(1000).fill(0x41);
    bytes[500] = 0;
    const text = formatRequest(request({ headers: [], body: bytes }), {
      showHeaders: false,
      pretty: false,
    });
    const lines = text.split("\n");
    expect(lines[1]).toBe("(binary body: 1000 bytes, first 256 shown)");
    expect(lines.slice(2, -1)).toHaveLength(16);
    expect(lines.at(-2)).toBe(
      "000000f0  41 41 41 41 41 41 41 41  41 41 41 41 41 41 41 41  |AAAAAAAAAAAAAAAA|",
    );
  });

  test("escapes terminal control characters in the body, headers and request line", () => {
    const hostile = request({
      method: "POST",
      target: "/\u001b]0;pwned\u0007",
      headers: [["x-evil", "a\u001b[2Jb\u009bc"]],
      body: encode('{"name": "\u001b[31mred\u001b[0m\r\u202eevil"}\n'),
    });
    const text = formatRequest(hostile, SHOW);
    expect(text).toBe(
      [
        '[1] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "POST /\\x1b]0;pwned\\x07 HTTP/1.1" 200 -',
        "x-evil: a\\x1b[2Jb\\x9bc",
        "",
        '{"name": "\\x1b[31mred\\x1b[0m\\x0d\\u202eevil"}',
        "",
        "------------",
      ].join("\n"),
    );
    // Nothing the terminal would act on is left.
    expect(stripControl(text)).toBe(text);
  });

  test("cuts a huge body with a note giving the size received", () => {
    const kept = encode("x".repeat(65536));
    const text = formatRequest(request({ headers: [], body: kept, size: 200_000 }), {
      showHeaders: false,
      pretty: true,
    });
    expect(text).toBe(
      [
        '[1] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "POST / HTTP/1.1" 200 -',
        "x".repeat(65536),
        "(body cut at 65536 bytes: 200000 bytes received)",
        "------------",
      ].join("\n"),
    );
  });

  test("keeps a cut body that ends inside a multi-byte character as text", () => {
    const whole = encode("é".repeat(10));
    const text = formatRequest(request({ headers: [], body: whole.subarray(0, 5), size: 20 }), {
      showHeaders: false,
      pretty: false,
    });
    expect(text.split("\n")[1]).toBe("éé");
    expect(text.split("\n")[2]).toBe("(body cut at 5 bytes: 20 bytes received)");
  });

  test("prints the signature check after the body", () => {
    const valid = formatRequest(request({ signature: { valid: true } }), SHOW);
    const invalid = formatRequest(
      request({ signature: { valid: false, reason: "no matching signature" } }),
      SHOW,
    );
    expect(valid).toEndWith('{"foo": "bar"}\nSignature: valid\n------------');
    expect(invalid).toEndWith(
      '{"foo": "bar"}\nSignature: INVALID (no matching signature)\n------------',
    );
  });

  test("says when the body could not be read", () => {
    const text = formatRequest(request({ bodyError: "connection reset" }), SHOW);
    expect(text).toEndWith("\n\n(body not received: connection reset)\n------------");
  });
});
