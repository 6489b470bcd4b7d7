import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webExtractTool } from "../../../src/agent/tools/webExtract.js";
import { toolsSchema, type WebSettings } from "../../../src/config/sections/tools.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { outcomeText, toolContext } from "../../helpers/toolContext.js";

const defaults = toolsSchema.parse({}).web;
const settings = (over: Partial<WebSettings> = {}): WebSettings => ({ ...defaults, ...over });

const PAGE = `<html><head><title>Release notes</title><script>track()</script></head>
<body><h1>v2.0</h1><p>Faster &amp; smaller.</p><style>.x{}</style></body></html>`;

let site: FakeApi;
beforeEach(async () => {
  site = await startFakeApi(() => ({ text: PAGE, headers: { "content-type": "text/html; charset=utf-8" } }));
});
afterEach(() => site.close());

const run = (tool = webExtractTool(settings()), url = `${site.url}/notes`) =>
  tool.execute({ url }, toolContext());

describe("web_extract", () => {
  it("refuses a loopback address by default, and nothing reaches the server", async () => {
    const outcome = await run();
    expect(outcome).toEqual({ ok: false, error: expect.stringContaining("127.0.0.1 is a private") });
    expect(!outcome.ok && outcome.error).toContain("tools.web.allow_private: true");
    expect(site.requests).toHaveLength(0);
  });

  it("refuses a host name that resolves to loopback (localhost), checked after DNS", async () => {
    const outcome = await run(webExtractTool(settings()), site.url.replace("127.0.0.1", "localhost"));
    expect(outcome).toMatchObject({
      ok: false,
      error: expect.stringMatching(/localhost \(.*\) is a private/),
    });
    expect(site.requests).toHaveLength(0);
  });

  it("checks every address a name resolves to, not only the first", async () => {
    const tool = webExtractTool(settings(), {
      resolve: async () => [
        { address: "93.184.216.34", family: 4 },
        { address: "10.0.0.7", family: 4 },
      ],
    });
    const outcome = await tool.execute({ url: "http://mixed.example/" }, toolContext());
    expect(outcome).toMatchObject({ ok: false, error: expect.stringContaining("mixed.example (10.0.0.7)") });
  });

  it("refuses IPv4-mapped IPv6 literals of private addresses", async () => {
    const port = new URL(site.url).port;
    const outcome = await run(webExtractTool(settings()), `http://[::ffff:127.0.0.1]:${port}/`);
    expect(outcome).toMatchObject({ ok: false, error: expect.stringContaining("is a private") });
    expect(site.requests).toHaveLength(0);
  });

  it("returns the readable text of a page with allow_private: true", async () => {
    const text = outcomeText(await run(webExtractTool(settings({ allow_private: true }))));
    expect(text).toBe(`URL: ${site.url}/notes\nTitle: Release notes\n\nv2.0\n\nFaster & smaller.`);
    expect(site.requests[0]?.headers["user-agent"]).toContain("svc");
  });

  it("refuses a redirect to a refused address, checked on every hop", async () => {
    // Only 127.0.0.1 counts as public here, so the first hop is fetched and the redirect is not.
    const port = new URL(site.url).port;
    site.enqueue({ status: 302, headers: { location: `http://localhost:${port}/inner` } });
    const tool = webExtractTool(settings(), {
      isPublic: (address) => address === "127.0.0.1",
      resolve: async () => [{ address: "127.0.0.2", family: 4 }],
    });
    const outcome = await run(tool);
    expect(outcome).toMatchObject({ ok: false, error: expect.stringContaining("localhost (127.0.0.2)") });
    expect(site.requests.map((r) => r.path)).toEqual(["/notes"]);
  });

  it("follows redirects to allowed addresses and reports the final URL", async () => {
    site.enqueue({ status: 301, headers: { location: "/moved" } });
    const text = outcomeText(await run(webExtractTool(settings({ allow_private: true }))));
    expect(text).toContain(`URL: ${site.url}/moved`);
    expect(site.requests.map((r) => r.path)).toEqual(["/notes", "/moved"]);
  });

  it("reads at most max_bytes and returns at most max_chars", async () => {
    const big = `<p>${"word ".repeat(100_000)}</p>`;
    site.setHandler(() => ({ text: big, headers: { "content-type": "text/html" } }));
    const cutBytes = outcomeText(
      await run(webExtractTool(settings({ allow_private: true, max_bytes: 1000 }))),
    );
    expect(cutBytes).toContain("[page cut at 1000 bytes]");
    expect(cutBytes.length).toBeLessThan(1200);
    const cutChars = outcomeText(await run(webExtractTool(settings({ allow_private: true, max_chars: 50 }))));
    expect(cutChars).toMatch(/^URL: .*\n\n(word ){10}\n\[truncated: \d+ more characters not shown\]$/);
    // An emoji is two UTF-16 units: a cut through one ends before it, never on half of it.
    site.setHandler(() => ({ text: "<p>a😀😀😀</p>", headers: { "content-type": "text/html" } }));
    const cutPair = outcomeText(await run(webExtractTool(settings({ allow_private: true, max_chars: 4 }))));
    expect(cutPair).toMatch(/^URL: .*\n\na😀\n\[truncated: 4 more characters not shown\]$/);
  });

  it("decodes gzip bodies, the byte cap counting decoded bytes", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip" });
      res.end(gzipSync(`<p>zipped</p>${"<p>z</p>".repeat(100_000)}`));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const tool = webExtractTool(settings({ allow_private: true, max_bytes: 5000 }));
      const text = outcomeText(await tool.execute({ url: `http://127.0.0.1:${port}/` }, toolContext()));
      expect(text).toMatch(/^URL: .*\n\nzipped\n\nz\n/);
      expect(text).toContain("[page cut at 5000 bytes]");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("decodes deflate sent with the zlib header and without it (raw deflate, as browsers take), the byte cap counting decoded bytes", async () => {
    const page = `<p>deflated</p>${"<p>d</p>".repeat(100_000)}`;
    const server = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/html", "content-encoding": "deflate" });
      if (req.url === "/stall") res.write(deflateRawSync(page).subarray(0, 10));
      else res.end(req.url === "/raw" ? deflateRawSync(page) : deflateSync(page));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      // The pages that come whole are fetched without the short timeout, which only the stalled one is about:
      // on a loaded machine a page can take longer than half a second to come.
      const fetch = (path: string, over: Partial<WebSettings> = {}) =>
        webExtractTool(settings({ allow_private: true, max_bytes: 5000, ...over })).execute(
          { url: `http://127.0.0.1:${port}${path}` },
          toolContext(),
        );
      for (const path of ["/zlib", "/raw"]) {
        const text = outcomeText(await fetch(path));
        expect(text).toMatch(/^URL: .*\n\ndeflated\n\nd\n/);
        expect(text).toContain("[page cut at 5000 bytes]");
      }
      expect(await fetch("/stall", { timeout_seconds: 0.5 })).toEqual({
        ok: false,
        error: "timed out after 0.5 s",
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("reads an empty body sent with a Content-Encoding as empty: the HTTP status is the error, not the decoder's", async () => {
    const server = createServer((req, res) => {
      const [status = "", coding = ""] = (req.url ?? "").slice(1).split("/");
      res.writeHead(Number(status), {
        "content-type": "text/html",
        "content-encoding": coding,
        "content-length": "0",
      });
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const tool = webExtractTool(settings({ allow_private: true }));
      const fetch = (path: string) => tool.execute({ url: `http://127.0.0.1:${port}${path}` }, toolContext());
      for (const coding of ["gzip", "deflate", "br", "gzip,br"]) {
        expect(await fetch(`/404/${coding}`)).toEqual({
          ok: false,
          error: `HTTP 404 from http://127.0.0.1:${port}/404/${coding}`,
        });
        expect(await fetch(`/200/${coding}`)).toMatchObject({ ok: true });
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("decodes a page in the encoding its <meta> declares when the Content-Type names none", async () => {
    const pages: Record<string, Buffer> = {
      "/meta": Buffer.from(
        `<html><head><meta charset="windows-1252"><title>Caf\xe9</title><p>na\xefve \xe0 5 \x93\x80\x94`,
        "latin1",
      ),
      "/equiv": Buffer.from(
        `<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-15"><p>\xa4 10`,
        "latin1",
      ),
    };
    const server = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(pages[req.url ?? ""]);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const tool = webExtractTool(settings({ allow_private: true }));
      const read = async (path: string) =>
        outcomeText(await tool.execute({ url: `http://127.0.0.1:${port}${path}` }, toolContext()));
      expect(await read("/meta")).toBe(`URL: http://127.0.0.1:${port}/meta\nTitle: Café\n\nnaïve à 5 “€”`);
      expect(await read("/equiv")).toBe(`URL: http://127.0.0.1:${port}/equiv\n\n€ 10`);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("times out on a server that does not answer", async () => {
    site.enqueue({ delayMs: 10_000, text: "late" });
    const outcome = await run(webExtractTool(settings({ allow_private: true, timeout_seconds: 0.2 })));
    expect(outcome).toEqual({ ok: false, error: "timed out after 0.2 s" });
  });

  it("decodes stacked codings (gzip, br) and refuses one it cannot decode rather than read compressed bytes as text", async () => {
    const page = "<p>layered</p>";
    const server = createServer((req, res) => {
      // "/layers/N": N gzip layers, each named in the header (thousands took minutes of CPU to undo).
      const layers = Number(/^\/layers\/(\d+)$/.exec(req.url ?? "")?.[1] ?? 0);
      let layered = Buffer.from(page);
      for (let i = 0; i < layers; i++) layered = gzipSync(layered);
      const [encoding, body] =
        layers > 0
          ? [Array(layers).fill("gzip").join(", "), layered]
          : req.url === "/stacked"
            ? ["gzip, br", brotliCompressSync(gzipSync(page))]
            : req.url === "/identity"
              ? ["identity", Buffer.from(page)]
              : ["zstd", gzipSync(page)];
      res.writeHead(200, { "content-type": "text/html", "content-encoding": encoding });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const tool = webExtractTool(settings({ allow_private: true }));
      const fetch = (path: string) => tool.execute({ url: `http://127.0.0.1:${port}${path}` }, toolContext());
      expect(outcomeText(await fetch("/stacked"))).toBe(`URL: http://127.0.0.1:${port}/stacked\n\nlayered`);
      expect(outcomeText(await fetch("/identity"))).toBe(`URL: http://127.0.0.1:${port}/identity\n\nlayered`);
      expect(await fetch("/zstd")).toEqual({
        ok: false,
        error: `http://127.0.0.1:${port}/zstd is sent with Content-Encoding "zstd", which svc cannot decode`,
      });
      expect(outcomeText(await fetch("/layers/5"))).toBe(`URL: http://127.0.0.1:${port}/layers/5\n\nlayered`);
      expect(await fetch("/layers/6")).toEqual({
        ok: false,
        error: `http://127.0.0.1:${port}/layers/6 is sent with 6 codings stacked in its Content-Encoding; svc undoes at most 5`,
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("times out on a compressed page that stops mid-body, and fails at once on one cut off", async () => {
    const zipped = gzipSync(`<p>${"slow ".repeat(20_000)}</p>`);
    const server = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip" });
      res.write(zipped.subarray(0, 100));
      if (req.url === "/cut") res.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const tool = webExtractTool(settings({ allow_private: true, timeout_seconds: 0.2 }));
      const stalled = await tool.execute({ url: `http://127.0.0.1:${port}/stall` }, toolContext());
      expect(stalled).toEqual({ ok: false, error: "timed out after 0.2 s" });
      // Not within 0.2 s: on a loaded machine the cut answer could come later and fail as a timeout. The
      // test's own 5 s bound is what says it fails at once rather than waiting out the default timeout.
      const patient = webExtractTool(settings({ allow_private: true }));
      const cut = await patient.execute({ url: `http://127.0.0.1:${port}/cut` }, toolContext());
      expect(cut).toMatchObject({ ok: false, error: expect.stringContaining("127.0.0.1") });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 5_000);

  it("refuses an untyped response that is binary (a PDF, NUL bytes), and reads untyped text as HTML", async () => {
    const pages: Record<string, Buffer> = {
      "/pdf": Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "latin1"),
      "/bin": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
      "/text": Buffer.from("<p>plain page</p>"),
      "/utf16": Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("<p>wide</p>", "utf16le")]),
    };
    const server = createServer((req, res) => {
      res.writeHead(200);
      res.end(pages[req.url ?? ""]);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const tool = webExtractTool(settings({ allow_private: true }));
      const at = (path: string) => tool.execute({ url: `http://127.0.0.1:${port}${path}` }, toolContext());
      for (const path of ["/pdf", "/bin"]) {
        expect(await at(path)).toEqual({
          ok: false,
          error: `not a text page: http://127.0.0.1:${port}${path} is binary data (it names no Content-Type)`,
        });
      }
      expect(outcomeText(await at("/text"))).toBe(`URL: http://127.0.0.1:${port}/text\n\nplain page`);
      expect(outcomeText(await at("/utf16"))).toBe(`URL: http://127.0.0.1:${port}/utf16\n\nwide`);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("a UTF-8 page cut at max_bytes ends on a whole character", async () => {
    site.enqueue({ text: "é".repeat(60), headers: { "content-type": "text/plain; charset=utf-8" } });
    const text = outcomeText(await run(webExtractTool(settings({ allow_private: true, max_bytes: 101 }))));
    expect(text).toBe(`URL: ${site.url}/notes\n\n${"é".repeat(50)}\n[page cut at 101 bytes]`);
  });

  it("a huge <title> does not carry the page past max_chars", async () => {
    site.enqueue({
      text: `<title>${"T".repeat(50_000)}</title><p>body</p>`,
      headers: { "content-type": "text/html" },
    });
    const text = outcomeText(await run(webExtractTool(settings({ allow_private: true, max_chars: 1000 }))));
    expect(text).toBe(`URL: ${site.url}/notes\nTitle: ${"T".repeat(300)}…\n\nbody`);
  });

  it("refuses other schemes, binary content and HTTP errors with a clear error", async () => {
    const tool = webExtractTool(settings({ allow_private: true }));
    expect(await tool.execute({ url: "file:///etc/passwd" }, toolContext())).toMatchObject({
      ok: false,
      error: expect.stringContaining("only http and https"),
    });
    site.enqueue(
      { text: "PNG", headers: { "content-type": "image/png" } },
      { status: 404, text: "no" },
      { status: 301, text: "Moved Permanently", headers: { "content-type": "text/plain" } },
    );
    expect(await run(tool)).toMatchObject({ ok: false, error: expect.stringContaining("not a text page") });
    expect(await run(tool)).toMatchObject({ ok: false, error: `HTTP 404 from ${site.url}/notes` });
    expect(await run(tool)).toEqual({
      ok: false,
      error: `HTTP 301 from ${site.url}/notes: a redirect without a Location header`,
    });
    expect(await tool.execute({}, toolContext())).toMatchObject({
      ok: false,
      error: expect.stringContaining('"url"'),
    });
  });
});
