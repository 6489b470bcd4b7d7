import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

function refusal(yaml: string): string {
  const h = tempHome();
  home = h;
  const file = h.write("config.yaml", yaml);
  try {
    loadConfig({ home: h.dir, env: {} });
  } catch (err) {
    return (err as Error).message.replaceAll(file, "FILE");
  }
  throw new Error("loaded without an error");
}

const BODY_RANGE =
  "write the largest body in bytes, a whole number from 1 to 268435456 (256 MiB, past which no body could be read as JSON; at most 64 bodies are received at once, so memory for them is bounded at 64 × this; default 1048576)";

const webhook = (setting: string) => `platforms:\n  webhook:\n    ${setting}\n`;

/** A number out of its key's range says what to write, not only which bound it broke. */
describe("a webhook setting out of its range says the range to write", () => {
  it.each([
    [
      "port: 70000",
      "FILE: platforms.webhook.port: expected at most 65535, got 70000 — write a port from 0 to 65535 (0 picks a free one)",
    ],
    [
      "port: -1",
      "FILE: platforms.webhook.port: expected at least 0, got -1 — write a port from 0 to 65535 (0 picks a free one)",
    ],
    [
      "rate_limit: 0",
      "FILE: platforms.webhook.rate_limit: expected more than 0, got 0 — write the requests per minute each route takes, a whole number of 1 or more (default 30)",
    ],
    [
      "max_body_bytes: -5",
      `FILE: platforms.webhook.max_body_bytes: expected more than 0, got -5 — ${BODY_RANGE}`,
    ],
    // Past 256 MiB no body could be read as JSON (V8 makes no string past ~512 MiB).
    [
      "max_body_bytes: 1e15",
      `FILE: platforms.webhook.max_body_bytes: expected at most 268435456, got 1000000000000000 — ${BODY_RANGE}`,
    ],
    [
      "max_body_bytes: 268435457",
      `FILE: platforms.webhook.max_body_bytes: expected at most 268435456, got 268435457 — ${BODY_RANGE}`,
    ],
    [
      "script_timeout_seconds: 0",
      "FILE: platforms.webhook.script_timeout_seconds: expected more than 0, got 0 — write a number of seconds above 0 (default 30)",
    ],
    [
      "workers: 65",
      "FILE: platforms.webhook.workers: expected at most 64, got 65 — write a whole number from 0 to 64",
    ],
  ])("%s", (setting, message) => {
    expect(refusal(webhook(setting))).toBe(message);
  });

  it("a fraction where a whole number goes says the range too", () => {
    expect(refusal(webhook("port: 80.5"))).toBe(
      "FILE: platforms.webhook.port: expected a whole number, got 80.5 — write a port from 0 to 65535 (0 picks a free one)",
    );
    expect(refusal(webhook("rate_limit: 1.5"))).toBe(
      "FILE: platforms.webhook.rate_limit: expected a whole number, got 1.5 — write the requests per minute each route takes, a whole number of 1 or more (default 30)",
    );
  });

  it("under extra too, named there", () => {
    expect(refusal(webhook("extra:\n      port: 65536"))).toBe(
      "FILE: platforms.webhook.extra.port: expected at most 65535, got 65536 — write a port from 0 to 65535 (0 picks a free one)",
    );
    expect(refusal(webhook("extra:\n      max_body_bytes: 1e15"))).toBe(
      `FILE: platforms.webhook.extra.max_body_bytes: expected at most 268435456, got 1000000000000000 — ${BODY_RANGE}`,
    );
  });

  it("a route's coalesce window or max wait below 0 says what to write, under routes and extra.routes", () => {
    const route = (coalesce: string) =>
      webhook(`routes:\n      pr:\n        secret: x\n        coalesce: {key: n, ${coalesce}}`);
    expect(refusal(route("window_seconds: -1"))).toBe(
      "FILE: platforms.webhook.routes.pr.coalesce.window_seconds: expected at least 0, got -1 — write the quiet window in seconds, 0 or more (default 30)",
    );
    expect(refusal(route("max_wait_seconds: -5"))).toBe(
      "FILE: platforms.webhook.routes.pr.coalesce.max_wait_seconds: expected at least 0, got -5 — write the longest wait in seconds from a group's first event, 0 or more (default 300)",
    );
    expect(
      refusal(
        webhook(
          "extra:\n      routes:\n        pr:\n          secret: x\n          coalesce: {key: n, window_seconds: -1}",
        ),
      ),
    ).toBe(
      "FILE: platforms.webhook.extra.routes.pr.coalesce.window_seconds: expected at least 0, got -1 — write the quiet window in seconds, 0 or more (default 30)",
    );
  });

  it("the agent's bounded counts say their range", () => {
    expect(refusal("agent:\n  max_concurrent_runs: 0\n")).toBe(
      "FILE: agent.max_concurrent_runs: expected more than 0, got 0 — write a whole number from 1 to 1000",
    );
  });

  it.each([
    [
      "timeout_seconds: 0",
      "FILE: agent.timeout_seconds: expected more than 0, got 0 — write the longest a run may take in seconds, above 0 (default 600)",
    ],
    [
      "max_tokens: 0",
      "FILE: agent.max_tokens: expected at least 1, got 0 — write the output tokens one model turn may use, a whole number of 1 or more (default 4096)",
    ],
    [
      "max_tokens: 1.5",
      "FILE: agent.max_tokens: expected a whole number, got 1.5 — write the output tokens one model turn may use, a whole number of 1 or more (default 4096)",
    ],
  ])("agent.%s says what to write", (setting, message) => {
    expect(refusal(`agent:\n  ${setting}\n`)).toBe(message);
  });

  it.each([
    [
      "gateway:\n  drain_timeout_seconds: 3601\n",
      "FILE: gateway.drain_timeout_seconds: expected at most 3600, got 3601 — write a number of seconds from 0 to 3600 (default 30)",
    ],
    [
      "gateway:\n  drain_timeout_seconds: -1\n",
      "FILE: gateway.drain_timeout_seconds: expected at least 0, got -1 — write a number of seconds from 0 to 3600 (default 30)",
    ],
    [
      "agent:\n  max_tool_result_chars: 1.5\n",
      "FILE: agent.max_tool_result_chars: expected a whole number, got 1.5 — write a number of characters such as 100000, or 0 for no cap",
    ],
    [
      "tools:\n  web:\n    max_bytes: 0\n",
      "FILE: tools.web.max_bytes: expected more than 0, got 0 — write the bytes read from one page, a whole number of 1 or more (default 2097152)",
    ],
    [
      "tools:\n  web:\n    max_chars: 0.5\n",
      "FILE: tools.web.max_chars: expected a whole number, got 0.5 — write the characters of a page's text returned to the model, a whole number of 1 or more (default 20000)",
    ],
    [
      "tools:\n  terminal:\n    max_output_bytes: -1\n",
      "FILE: tools.terminal.max_output_bytes: expected more than 0, got -1 — write the bytes kept of stdout and of stderr each, a whole number of 1 or more (default 65536)",
    ],
    [
      "tools:\n  file:\n    max_bytes: 0\n",
      "FILE: tools.file.max_bytes: expected more than 0, got 0 — write the most bytes file_read returns and file_write accepts, a whole number of 1 or more (default 1048576)",
    ],
  ])("%s says what to write, not only the bound", (yaml, message) => {
    expect(refusal(yaml)).toBe(message);
  });

  it.each([
    [
      "svc:prod",
      `FILE: state.redis_key_prefix: got "svc:prod", which holds ":" — a prefix is letters, digits, '.', '_' and '-' (svc adds the ":" after it): write svc-prod`,
    ],
    [
      "'my app'",
      `FILE: state.redis_key_prefix: got "my app", which holds " " — a prefix is letters, digits, '.', '_' and '-' (svc adds the ":" after it): write my-app`,
    ],
    ["''", "FILE: state.redis_key_prefix: must not be empty — write a value, or leave the key out"],
    [
      "a".repeat(65),
      "FILE: state.redis_key_prefix: 65 characters long — a prefix has at most 64: shorten it",
    ],
  ])("state.redis_key_prefix: %s names what is wrong and what to write", (prefix, message) => {
    expect(refusal(`state:\n  redis_key_prefix: ${prefix}\n`)).toBe(message);
  });

  it("agent.command: [] says what to write", () => {
    expect(refusal("agent:\n  provider: command\n  command: []\n")).toBe(
      "FILE: agent.command: expected at least 1 entry, got [] — write the program and its arguments, one entry each: command: [my-agent, --quiet]",
    );
  });
});
