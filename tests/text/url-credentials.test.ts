import { describe, expect, test } from "bun:test";
import {
  keepStoredPassword,
  maskUrlPassword,
  maskUrlPasswords,
  maskUrlSecrets,
  maskUrlSecretsInText,
  withoutUrlCredentials,
} from "../../lib/text/url-credentials.ts";

describe("withoutUrlCredentials()", () => {
  const plain = "http://127.0.0.1:11434/api/tags and http://host/@user";
  test.each([
    [
      "takes user:password@ out of every URL in a text, and nothing else",
      "Ollama at http://digest:s3cret@ollama.lan:11434 and https://u@h/v1?x=a@b, mail a@b.example",
      "Ollama at http://ollama.lan:11434 and https://h/v1?x=a@b, mail a@b.example",
    ],
    ["keeps a URL without credentials, and an @ in its path, as it is", plain, plain],
    [
      "takes an encoded @ in the password with the rest",
      "smtp://me:p%40ss@mail.example:587",
      "smtp://mail.example:587",
    ],
  ])("%s", (_, text, shown) => {
    expect(withoutUrlCredentials(text)).toBe(shown);
  });
});

describe("maskUrlPassword()", () => {
  test("masks the password and keeps the user, the host and the rest", () => {
    expect(maskUrlPassword("https://user:secret@host.example:8443/path?q=a@b#f")).toBe(
      "https://user:***@host.example:8443/path?q=a@b#f",
    );
  });

  test("masks a password holding an @ (the last @ ends it) or template text", () => {
    expect(maskUrlPassword("https://u:p@ss@host/")).toBe("https://u:***@host/");
    expect(maskUrlPassword("https://u:{{ data.pin }}@host/{{ data.id }}")).toBe(
      "https://u:***@host/{{ data.id }}",
    );
  });

  test("leaves a URL without a password as it is: no userinfo, a user only, an empty password", () => {
    for (const url of [
      "https://host/a@b",
      "https://user@host/",
      "https://user:@host/",
      "not a url",
    ]) {
      expect(maskUrlPassword(url)).toBe(url);
    }
  });
});

describe("maskUrlSecrets()", () => {
  test.each([
    ["https://u:pw@h.example/p?key=abc&id=1#top", "https://u:***@h.example/p?key=***&id=***#top"],
    ["https://h.example/p?flag&empty=&x=y", "https://h.example/p?flag&empty=&x=***"],
    ["https://h.example/{{ data.id }}?t={{ data.sku }}", "https://h.example/{{ data.id }}?t=***"],
    ["https://h.example/plain", "https://h.example/plain"],
  ])("%s", (url, masked) => {
    expect(maskUrlSecrets(url)).toBe(masked);
  });
});

describe("maskUrlSecretsInText()", () => {
  test("masks every URL's password and query values in a text, a relative URL's too", () => {
    expect(
      maskUrlSecretsInText(
        "HTTP 301: redirects are not followed (Location: https://u:pw@e.example/h?api_key=k3y&id=7#top)",
      ),
    ).toBe(
      "HTTP 301: redirects are not followed (Location: https://u:***@e.example/h?api_key=***&id=***#top)",
    );
    expect(maskUrlSecretsInText("location: /hook/?token=abc\nserver: nginx")).toBe(
      "location: /hook/?token=***\nserver: nginx",
    );
    expect(maskUrlSecretsInText("no answer from e.example:443: is it up?")).toBe(
      "no answer from e.example:443: is it up?",
    );
  });
});

describe("maskUrlPasswords()", () => {
  test("masks every URL's password in a text, and nothing else", () => {
    expect(
      maskUrlPasswords(
        'fetch https://a:one@h1/x failed; "http://b:two@h2:81" and mail a@b.example',
      ),
    ).toBe('fetch https://a:***@h1/x failed; "http://b:***@h2:81" and mail a@b.example');
  });
});

describe("keepStoredPassword()", () => {
  const stored = "https://user:secret@host.example/old";

  test("*** with the stored scheme, user and host keeps the stored password", () => {
    expect(keepStoredPassword("https://user:***@HOST.example/new?x=1", stored)).toBe(
      "https://user:secret@HOST.example/new?x=1",
    );
  });

  test("a new password, another host, user or scheme, or no stored password: saved as given", () => {
    for (const submitted of [
      "https://user:changed@host.example/new",
      "https://user:***@evil.example/new",
      "https://user:***@host.example:8443/new",
      "https://other:***@host.example/new",
      "http://user:***@host.example/new",
      "https://host.example/new",
    ]) {
      expect(keepStoredPassword(submitted, stored)).toBe(submitted);
    }
    expect(keepStoredPassword("https://user:***@host.example/", "https://host.example/")).toBe(
      "https://user:***@host.example/",
    );
  });
});
