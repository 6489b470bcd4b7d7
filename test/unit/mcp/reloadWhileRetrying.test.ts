import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import type { TransportFor } from "../../../src/io/mcp/connect.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { entry, text, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

/** One connect's transport, held until the test lets its server answer (or closes it: the connect fails). */
interface Attempt {
  /** The command as the connect rendered it from `.env`. */
  readonly command: string;
  answer(): void;
  fail(): Promise<void>;
}

/**
 * A `transportFor` whose every connect waits for the test: the attempt (a backoff retry) stays in flight,
 * in `connecting`, for as long as the test wants; `next()` resolves when the next connect has begun.
 */
function heldConnects(): { transportFor: TransportFor; attempts: Attempt[]; next(): Promise<Attempt> } {
  const attempts: Attempt[] = [];
  const waiting: Array<(a: Attempt) => void> = [];
  const transportFor: TransportFor = (_name, rendered) => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    const attempt: Attempt = {
      command: rendered.command ?? "",
      answer: () => void buildServer().connect(server),
      fail: () => server.close(),
    };
    attempts.push(attempt);
    waiting.shift()?.(attempt);
    return client;
  };
  const next = () => new Promise<Attempt>((resolve) => waiting.push(resolve));
  return { transportFor, attempts, next };
}

/**
 * The missing line added to `.env` and `svc mcp reload` run while a backoff retry of the failed server is
 * in flight (state `connecting`): the reload named the server neither as retried nor as failed, but as
 * "unchanged", and `svc mcp reload --wait` did not wait for the outcome of that try (a flaky CLI test, on a
 * slow machine). The simulated clock moves only when the test says: the backoff retry starts exactly then.
 */
describe("a reload while a failed server's backoff retry is in flight (SDK server over InMemoryTransport)", () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
  const servers = { late: entry({ command: "${LATE_BIN}" }) };

  it("a retry that rendered the new .env: named as retried, and that try is the one that connects", async () => {
    const held = heldConnects();
    const clock = new SimulatedClock();
    const first = held.next();
    const h = ctx.hub(ctx.home, servers, { clock, transportFor: held.transportFor });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the variable not set yet, as rendered
    expect((await first).command).toBe("${LATE_BIN}");
    await (await first).fail();
    expect((await h.settled("late")).state).toBe("failed");

    ctx.home.write(".env", "LATE_BIN=late-server\n");
    const retry = held.next();
    clock.increment(1000); // the first backoff: the retry starts, rendering .env as it is now
    expect((await retry).command).toBe("late-server");
    expect(h.status()[0]?.state).toBe("connecting");

    const summary = await h.reload(servers);
    expect(summary.retried).toEqual(["late"]);
    expect(summary.changed).toEqual([]);
    expect(h.status()[0]?.state).toBe("connecting");
    (await retry).answer();
    expect((await h.settled("late")).state).toBe("connected");
    // The try in flight was the retry: the reload started no other connect.
    expect(held.attempts.map((a) => a.command)).toEqual(["${LATE_BIN}", "late-server"]);
    expect(text(await h.call("late", "echo", { text: "ok" }))).toBe("ok");
  });

  it("a retry that rendered .env before the line was added: named as retried, and connected anew with it", async () => {
    const held = heldConnects();
    const clock = new SimulatedClock();
    const first = held.next();
    const h = ctx.hub(ctx.home, servers, { clock, transportFor: held.transportFor });
    await (await first).fail();
    expect((await h.settled("late")).state).toBe("failed");

    const stale = held.next();
    clock.increment(1000); // the retry starts before the line is written
    expect((await stale).command).toBe("${LATE_BIN}");
    ctx.home.write(".env", "LATE_BIN=late-server\n");

    const anew = held.next();
    const reloaded = h.reload(servers);
    // The stale try is given up (it would only fail), and a connect with the new .env starts.
    expect((await anew).command).toBe("late-server");
    const summary = await reloaded;
    expect(summary.retried).toEqual(["late"]);
    expect(summary.changed).toEqual([]);
    expect(summary.unchanged).toEqual(["late"]);
    (await anew).answer();
    expect((await h.settled("late")).state).toBe("connected");
    expect(text(await h.call("late", "echo", { text: "ok" }))).toBe("ok");
  });
});
