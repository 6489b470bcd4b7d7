import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import {
  codingProblem,
  decodeContent,
  TOO_MANY_CODINGS,
  UNDECODABLE,
  UNSUPPORTED_CODING,
} from "../../../src/streams/contentCoding.js";
import type { PipelineCtx } from "../../../src/streams/context.js";
import { parseStage } from "../../../src/streams/stages/parse.js";

const JSON_BODY = JSON.stringify({ action: "opened", pull_request: { number: 7 } });
const text = (body: Buffer | "too_large") => (body === "too_large" ? body : body.toString("utf8"));

/** The parse stage's answer for a body as the ingress hands it on (`decodeContent` already applied). */
function parsed(body: Buffer, contentEncoding: string): unknown {
  const ctx = {
    inbound: {
      method: "POST",
      path: "/webhooks/r",
      routeName: "r",
      profile: undefined,
      headers: { "content-encoding": contentEncoding },
      body,
      receivedAt: 0,
    },
  } as unknown as PipelineCtx;
  const out = parseStage(ctx);
  return "payload" in (out as object) ? (out as PipelineCtx).payload : out;
}

describe("request bodies with a Content-Encoding (RFC 9110 §8.4)", () => {
  it("gzip, x-gzip, deflate (zlib-wrapped or raw), br and a list of codings are undone, in any case", () => {
    const cases: [string, Buffer][] = [
      ["gzip", gzipSync(JSON_BODY)],
      ["x-gzip", gzipSync(JSON_BODY)],
      ["deflate", deflateSync(JSON_BODY)],
      ["deflate", deflateRawSync(JSON_BODY)],
      ["br", brotliCompressSync(JSON_BODY)],
      ["GZip", gzipSync(JSON_BODY)],
      ["identity", Buffer.from(JSON_BODY)],
      // Applied in the order listed: undone from the last.
      ["deflate, gzip", gzipSync(deflateSync(JSON_BODY))],
      ["identity, gzip", gzipSync(JSON_BODY)],
    ];
    for (const [coding, wire] of cases) {
      const body = decodeContent(wire, coding, 1_048_576);
      expect(text(body), coding).toBe(JSON_BODY);
      expect(parsed(body as Buffer, coding), coding).toEqual(JSON.parse(JSON_BODY));
    }
  });

  it("max_body_bytes bounds the decoded body: exactly at it is read, one byte past is too large (a gzip bomb is cut)", () => {
    const at = (n: number) => JSON.stringify({ a: "x".repeat(n - 8) });
    expect(text(decodeContent(gzipSync(at(100)), "gzip", 100))).toBe(at(100));
    expect(decodeContent(gzipSync(at(101)), "gzip", 100)).toBe("too_large");
    expect(decodeContent(gzipSync(Buffer.alloc(8 * 1024 * 1024)), "gzip", 1_048_576)).toBe("too_large");
    expect(decodeContent(gzipSync(gzipSync(at(101))), "gzip, gzip", 100)).toBe("too_large");
  });

  it("an unknown coding is 415 naming the codings svc reads (RFC 9110 §15.5.16); bytes not in their coding are 400", () => {
    const zstd = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0]);
    const handedOn = decodeContent(zstd, "zstd", 1000);
    expect(handedOn).toBe(zstd);
    expect(parsed(zstd, "zstd")).toBe(UNSUPPORTED_CODING);
    expect(UNSUPPORTED_CODING).toMatchObject({
      status: 415,
      headers: { "Accept-Encoding": "gzip, deflate, br" },
    });
    expect(parsed(decodeContent(Buffer.from("\x1f\x8b not gzip"), "gzip", 1000) as Buffer, "gzip")).toBe(
      UNDECODABLE,
    );
    expect(UNDECODABLE.status).toBe(400);
    expect(
      parsed(decodeContent(gzipSync(JSON_BODY), "gzip, compress", 1000) as Buffer, "gzip, compress"),
    ).toBe(UNSUPPORTED_CODING);
  });

  it("plain JSON under a Content-Encoding it is not in is read as JSON; decoded text that is not JSON is the usual 400", () => {
    const empty = decodeContent(Buffer.alloc(0), "gzip", 1000) as Buffer;
    expect(parsed(empty, "gzip")).toMatchObject({ status: 400, body: { error: "Invalid JSON body" } });
    const plain = decodeContent(Buffer.from(JSON_BODY), "gzip", 1000) as Buffer;
    expect(parsed(plain, "gzip")).toEqual(JSON.parse(JSON_BODY));
    const notJson = decodeContent(gzipSync("not json"), "gzip", 1000) as Buffer;
    expect(codingProblem(notJson, { "content-encoding": "gzip" })).toBeUndefined();
    expect(parsed(notJson, "gzip")).toMatchObject({ status: 400, body: { error: "Invalid JSON body" } });
  });

  it("at most 5 codings are undone: a longer chain is handed on as received, never inflated, and answered 415 after the signature check", () => {
    const layered = (n: number) => {
      let wire = Buffer.from(JSON_BODY);
      for (let i = 0; i < n; i++) wire = gzipSync(wire);
      return wire;
    };
    const chain = (n: number) => Array(n).fill("gzip").join(", ");
    expect(text(decodeContent(layered(5), chain(5), 1_048_576))).toBe(JSON_BODY);
    // Identity is no work, so it does not count.
    expect(text(decodeContent(layered(5), `identity, ${chain(5)}, identity`, 1_048_576))).toBe(JSON_BODY);
    // Each layer may inflate up to max_body_bytes: a chain as long as a header holds (800 on uWS, 26 000
    // on node:http) held the event loop for seconds per unsigned request.
    const six = layered(6);
    expect(decodeContent(six, chain(6), 1_048_576)).toBe(six);
    expect(parsed(six, chain(6))).toBe(TOO_MANY_CODINGS);
    expect(TOO_MANY_CODINGS).toMatchObject({
      status: 415,
      body: {
        error:
          "Unsupported Content-Encoding: more than 5 codings — send the body uncompressed, or compressed once as gzip, deflate or br",
      },
      headers: { "Accept-Encoding": "gzip, deflate, br" },
    });
    // An unknown coding is named as such, however long the chain.
    const unknown = `zstd, ${chain(6)}`;
    expect(parsed(decodeContent(six, unknown, 1_048_576) as Buffer, unknown)).toBe(UNSUPPORTED_CODING);
  });
});
