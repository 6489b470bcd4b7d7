import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { everythingStdio } from "../../fixtures/mcp/everything.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type SvcResult, svc } from "../cli/svc.js";

/** `svc mcp ...` as a user runs it, against the real server-everything over stdio (no npx). */
describe("svc mcp CLI against server-everything", () => {
  let home: TempHome;
  const results = new Map<string, SvcResult>();
  const run = (label: string) => results.get(label) as SvcResult;

  beforeAll(async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: false } },
        // Sampling requests go to the agent runner: this one answers with a fixed line.
        agent: { provider: "command", command: ["sh", "-c", "cat >/dev/null; printf 'the agent says hi'"] },
        mcp_servers: {
          everything: everythingStdio({ sampling: { enabled: true }, timeout: 20 }),
          picked: everythingStdio({ tools: { include: ["get-sum", "write_file"] } }),
        },
      }),
    );
    // One after another, in this worker (svc runs these in-process): side by side, each was a CLI process of
    // its own (~0.8 CPU-s each). Each still starts its own server process.
    const commands: Record<string, string[]> = {
      tools: ["mcp", "tools", "picked"],
      image: ["mcp", "call", "everything", "get-tiny-image"],
      sampling: ["mcp", "call", "everything", "trigger-sampling-request", "--args", '{"prompt":"hi"}'],
      elicitation: ["mcp", "call", "everything", "trigger_elicitation_request"],
    };
    for (const [label, args] of Object.entries(commands)) results.set(label, await svc(home, args));
  }, 90_000);

  afterAll(() => home?.cleanup());

  it("svc mcp tools prints each registered name beside the server's own, and a filter entry that matches nothing", () => {
    expect(run("tools").code).toBe(0);
    expect(run("tools").stdout).toMatch(
      // A command agent's runs reach the tools at SVC_MCP_URL: the note says which runs get them.
      /^REGISTERED NAME\s+SERVER TOOL\s+DESCRIPTION\nmcp__picked__get_sum\s+get-sum\s+\S.*\nAgent runs \(agent\.provider command\): offered to cron jobs\n$/,
    );
    expect(run("tools").stderr).toMatch(
      /^warning: mcp_servers\.picked\.tools\.include: "write_file" matches no tool of this server — filters use the server's own names: it lists "echo", .*"get-sum".* and \d+ more\n$/,
    );
  });

  it("svc mcp call prints an image block as one short line between the text blocks", () => {
    expect(run("image")).toMatchObject({ code: 0, stderr: "" });
    expect(run("image").stdout).toMatch(
      /^Here's the image you requested:\n\[image image\/png, \d+ bytes — --json prints the data\]\nThe image above is the MCP logo\.\n$/,
    );
  });

  it("svc mcp call answers the server's sampling request with the configured agent", () => {
    expect(run("sampling").code).toBe(0);
    expect(run("sampling").stdout).toContain('"text": "the agent says hi"');
  });

  it("svc mcp call without a terminal declines the server's form elicitation, without hanging", () => {
    expect(run("elicitation").code).toBe(0);
    expect(run("elicitation").stdout).toContain("User declined to provide the requested information.");
  });
});
