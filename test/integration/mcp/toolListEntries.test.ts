import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { captureLogger } from "../../fakes/logCapture.js";
import { entry, text, useHubs } from "./harness.js";

const ctx = useHubs();
const SERVER = join(import.meta.dirname, "../../fixtures/mcp/malformed-list-server.mjs");

/** This process's children running the fixture with `flag`, by pid. */
function serverProcesses(flag: string): string[] {
  const listed = execFileSync("ps", ["--ppid", String(process.pid), "-o", "pid=,args="], {
    encoding: "utf8",
  });
  return listed
    .split("\n")
    .filter((line) => line.includes("malformed-list-server.mjs") && line.includes(flag))
    .map((line) => line.trim().split(" ")[0] as string);
}

describe("a tools/list entry no tool can be registered from", () => {
  it("is skipped and named by its place, and the server's other tools are registered", async () => {
    const h = ctx.hub(ctx.home, {
      odd: entry({ command: process.execPath, args: [SERVER, "--bad-entries"] }),
    });
    const status = await h.settled("odd");
    expect(status).toMatchObject({ state: "connected", toolCount: 1 });
    expect(h.tools().map((t) => t.name)).toEqual(["mcp__odd__fine"]);
    const rest = "(the rest of the list is registered as usual)";
    expect(status.warnings).toEqual([
      `mcp_servers.odd: tools/list entry tools[1] is skipped: it has no name ${rest}`,
      `mcp_servers.odd: tools/list entry tools[2] is skipped: its name is 7, not text ${rest}`,
      // "" would register as mcp__odd__, which names no tool.
      `mcp_servers.odd: tools/list entry tools[3] is skipped: its name is empty ${rest}`,
      `mcp_servers.odd: tools/list entry tools[4] is skipped: it is a string, not a tool ${rest}`,
      `mcp_servers.odd: tools/list entry tools[5] is skipped: "odd": annotations: expected object, received string ${rest}`,
    ]);
    expect(text(await h.call("odd", "fine", { q: "x" }))).toBe("ran fine");
  });

  it("list_resources / list_prompts: an item without its uri or name is left out and named, not the list failed", async () => {
    const h = ctx.hub(ctx.home, {
      odd: entry({
        command: process.execPath,
        args: [SERVER, "--bad-entries"],
        tools: { resources: true, prompts: true },
      }),
    });
    await h.settled("odd");
    const resources = (await h.call("odd", "list_resources", {})).content as Array<{ text: string }>;
    expect(JSON.parse(resources[0]?.text ?? "")).toEqual({
      resources: [{ uri: "note://one", name: "one" }],
      resourceTemplates: [],
    });
    expect(resources[1]?.text).toBe(
      "The server also listed an item without the key it is known by, left out: resources[1] (no uri)",
    );
    const prompts = (await h.call("odd", "list_prompts", {})).content as Array<{ text: string }>;
    expect(JSON.parse(prompts[0]?.text ?? "")).toEqual({ prompts: [{ name: "first-prompt" }] });
    expect(prompts[1]?.text).toBe(
      "The server also listed an item without the key it is known by, left out: prompts[1] (no name)",
    );
  });

  it("a server that declares tools but answers tools/list with Method not found connects with none, and says so", async () => {
    const h = ctx.hub(ctx.home, {
      bare: entry({ command: process.execPath, args: [SERVER, "--no-tools-list"] }),
    });
    const status = await h.settled("bare");
    expect(status).toMatchObject({ state: "connected", toolCount: 0 });
    expect(status.warnings).toEqual([
      "mcp_servers.bare: the server declares the tools capability but answers tools/list with -32601 (Method not found), so no tool of it is registered — fix the server, or have it declare no tools",
    ]);
    expect(h.noToolsReason("bare")).toBe(
      "the server declares the tools capability but has no tools/list (Method not found)",
    );
  });

  it("a nextCursor written as a number (2) asks for the next page by its text, not the listing failed", async () => {
    const h = ctx.hub(ctx.home, {
      paged: entry({ command: process.execPath, args: [SERVER, "--number-cursor"] }),
    });
    expect(await h.settled("paged")).toMatchObject({ state: "connected", toolCount: 2 });
    expect(h.tools().map((t) => t.name)).toEqual(["mcp__paged__first", "mcp__paged__second"]);
  });

  it("tools: null (a Go server's nil slice) is an empty list, not a failed connect", async () => {
    const h = ctx.hub(ctx.home, {
      nil: entry({ command: process.execPath, args: [SERVER, "--null-tools"] }),
    });
    expect(await h.settled("nil")).toMatchObject({ state: "connected", toolCount: 0 });
    expect(h.noToolsReason("nil")).toBe("the server lists no tools");
  });
});

describe("an initialize answer under an id svc never sent", () => {
  it("the connect timeout quotes it, rather than saying only that no answer came", async () => {
    const clock = new SimulatedClock();
    const log = captureLogger();
    const h = ctx.hub(
      ctx.home,
      { stray: entry({ command: process.execPath, args: [SERVER, "--wrong-id"], connect_timeout: 60 }) },
      { clock, logger: log.logger },
    );
    await vi.waitFor(() => expect(log.messages().join("\n")).toContain("answered initialize"), {
      timeout: 10_000,
      interval: 20,
    });
    clock.increment(60_000);
    expect(h.status()[0]?.lastError).toMatch(
      /^connect timed out after 60 s \(connect_timeout\) — the server answered with an id svc never sent, so its answer matched no request: \{"jsonrpc":"2\.0","id":100,"result":\{"protocolVersion":.*\} \(each answer must carry the id of the request it answers\)$/,
    );
  });
});

describe("a tools/list answer at connect under an id svc never sent", () => {
  it("the connect timeout quotes it too", async () => {
    const clock = new SimulatedClock();
    const log = captureLogger();
    const h = ctx.hub(
      ctx.home,
      {
        stray: entry({ command: process.execPath, args: [SERVER, "--wrong-list-id"], connect_timeout: 60 }),
      },
      { clock, logger: log.logger },
    );
    await vi.waitFor(() => expect(log.messages().join("\n")).toContain("answered tools/list"), {
      timeout: 10_000,
      interval: 20,
    });
    clock.increment(60_000);
    expect(h.status()[0]?.lastError).toBe(
      'connect timed out after 60 s (connect_timeout) — the server answered with an id svc never sent, so its answer matched no request: {"jsonrpc":"2.0","id":101,"result":{"tools":[]}} (each answer must carry the id of the request it answers)',
    );
    // The connect given up closes its session at once: the process goes now, not once the listing's own
    // wait (the same 60 s, on the real clock) has passed, while the retry starts another beside it.
    await vi.waitFor(() => expect(serverProcesses("--wrong-list-id")).toEqual([]), {
      timeout: 10_000,
      interval: 50,
    });
  });

  it("quoted in its first 200 characters once the entry's credentials are redacted: none is cut in two", async () => {
    // Holding a delimiter, from the answer's character 190: cut at 200 after its colon.
    const token = "pw12345678:SECRETtail99";
    const clock = new SimulatedClock();
    const log = captureLogger();
    const h = ctx.hub(
      ctx.home,
      {
        stray: entry({
          command: process.execPath,
          args: [SERVER, "--wrong-list-id"],
          env: { API_TOKEN: token },
          connect_timeout: 60,
        }),
      },
      { clock, logger: log.logger },
    );
    await vi.waitFor(() => expect(log.messages().join("\n")).toContain("answered tools/list"), {
      timeout: 10_000,
      interval: 20,
    });
    clock.increment(60_000);
    const answer = `{"jsonrpc":"2.0","id":101,"result":{"tools":[{"name":"k","description":"${"d".repeat(113)} key [redacted] and more`;
    expect(h.status()[0]?.lastError).toBe(
      `connect timed out after 60 s (connect_timeout) — the server answered with an id svc never sent, so its answer matched no request: ${answer.slice(0, 200)}… (each answer must carry the id of the request it answers)`,
    );
  });
});
