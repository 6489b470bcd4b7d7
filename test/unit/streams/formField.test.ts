import { describe, expect, it } from "vitest";
import { formFieldBytes } from "../../../src/streams/formField.js";

const field = (body: string | Buffer, name = "payload") =>
  formFieldBytes(typeof body === "string" ? Buffer.from(body) : body, name);

describe("formFieldBytes (application/x-www-form-urlencoded, as the URL standard parses it)", () => {
  it("reads the first field of the name, its escapes and '+' decoded, as URLSearchParams reads text", () => {
    for (const body of [
      "payload=%7B%7D",
      "a=1&payload=%7B%7D&payload=x",
      "&&payload=%7B%7D&",
      "p%61yload=%7B%7D",
    ]) {
      expect(field(body)?.toString()).toBe(new URLSearchParams(body).get("payload"));
    }
    expect(field("payload=a+b%2Bc%25")?.toString()).toBe("a b+c%");
    expect(field("payload=%zz%4")?.toString()).toBe("%zz%4");
  });

  it("a field without '=' or with an empty value is empty; no such field is undefined", () => {
    expect(field("payload")?.length).toBe(0);
    expect(field("a=1&payload=")?.length).toBe(0);
    expect(field("a=1&payloads=2")).toBeUndefined();
    expect(field("")).toBeUndefined();
  });

  it("keeps bytes that are not UTF-8 as sent (URLSearchParams would make them U+FFFD)", () => {
    expect(field("payload=%FF%C3")).toEqual(Buffer.from([0xff, 0xc3]));
  });
});
