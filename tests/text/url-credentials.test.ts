import { describe, expect, test } from "bun:test";
import { withoutUrlCredentials } from "../../lib/text/url-credentials.ts";

describe("withoutUrlCredentials()", () => {
  test("takes user:password@ out of every URL in a text, and nothing else", () => {
    expect(
      withoutUrlCredentials(
        "Ollama at http://digest:s3cret@ollama.lan:11434 and https://u@h/v1?x=a@b, mail a@b.example",
      ),
    ).toBe("Ollama at http://ollama.lan:11434 and https://h/v1?x=a@b, mail a@b.example");
  });

  test("keeps a URL without credentials, and an @ in its path, as it is", () => {
    const text = "http://127.0.0.1:11434/api/tags and http://host/@user";
    expect(withoutUrlCredentials(text)).toBe(text);
  });

  test("takes an encoded @ in the password with the rest", () => {
    expect(withoutUrlCredentials("smtp://me:p%40ss@mail.example:587")).toBe(
      "smtp://mail.example:587",
    );
  });
});
