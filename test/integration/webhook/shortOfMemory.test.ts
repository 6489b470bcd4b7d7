import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";

const children: ChildProcess[] = [];
let home: TempHome | undefined;
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  home?.cleanup();
});

describe("a gateway whose JavaScript heap nears its limit", () => {
  it("answers new webhook requests 503 short of memory with Retry-After, logs a WARN as refusing starts, and stays up (it ran out of heap and died)", async () => {
    home = tempHome();
    // Each event opens a coalescing group of its own that waits for minutes, holding its ~600 KB text.
    home.write(
      "config.yaml",
      stringify(
        webhookConfig(
          {
            held: {
              secret: "INSECURE_NO_AUTH",
              prompt: "{text}",
              coalesce: { key: "{n}", window_seconds: 600, max_wait_seconds: 900 },
            },
          },
          { rate_limit: 100_000 },
        ),
      ),
    );
    // A small heap whose limit is nearly all old generation (one MB semi-spaces).
    const gateway = await startCliGateway(home, children, {
      NODE_OPTIONS: "--max-old-space-size=24 --max-semi-space-size=1",
    });
    const text = "y".repeat(600_000);
    const url = `http://127.0.0.1:${gateway.port}/webhooks/held`;
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof postJson>> | undefined;
    for (let n = 0; n < 200 && refused === undefined; n++) {
      const answer = await postJson(url, { n, text: `${text}${n}` }).catch((err: Error) => ({
        status: 0,
        body: { error: err.message },
        headers: new Headers(),
      }));
      statuses.push(answer.status);
      if (answer.status !== 202) refused = answer;
    }
    expect(refused?.status, `answers: ${statuses.join(" ")}\n${gateway.output()}`).toBe(503);
    expect(refused?.body).toEqual({ error: "The server is short of memory, retry later" });
    expect(refused?.headers.get("retry-after")).toBe("30");
    // Still up: later requests are answered (refused, or taken again once collection made room).
    expect([202, 503]).toContain((await postJson(url, { n: -1, text: "small" })).status);
    expect(gateway.child.exitCode).toBeNull();
    // One WARN as refusing starts, one INFO as it ends: never a line per refused request.
    const lines =
      gateway.output().match(/(WARN|INFO) \[webhook\] (short of memory|memory available again): .*/g) ?? [];
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.map((line) => line.slice(0, 4))).toEqual(
      lines.map((_, i) => (i % 2 === 0 ? "WARN" : "INFO")),
    );
    expect(lines[0]).toMatch(
      /^WARN \[webhook\] short of memory: the JavaScript heap holds \d+% of its limit \(\d+ of \d+ MB\); new webhook requests are answered 503 \(Retry-After: 30\) until it is at 70% or less — give the gateway a larger heap \(NODE_OPTIONS=--max-old-space-size=<MB>\) or send it fewer or smaller events at once$/,
    );
    if (lines[1] !== undefined)
      expect(lines[1]).toMatch(
        /^INFO \[webhook\] memory available again: the JavaScript heap holds \d+% of its limit \(\d+ of \d+ MB\); webhook requests are taken again \(\d+ answered 503 meanwhile\)$/,
      );
  }, 30_000);
});
