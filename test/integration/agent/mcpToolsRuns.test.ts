import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type RecordingMcp, startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";

/** `svc mcp tools <server>` says which routes' model runs get the server's tools and which calls they refuse. */

let notes: RecordingMcp;
beforeAll(async () => {
  notes = await startRecordingMcp();
});
afterAll(() => notes?.close());

describe("svc mcp tools with a model provider", () => {
  it("names the routes offered the server's tools, the ones that are not, and the tools runs refuse", async () => {
    const home = tempHome();
    try {
      home.write(
        "config.yaml",
        stringify({
          agent: { provider: "openai", model: "m", base_url: "http://127.0.0.1:9/v1" },
          mcp_servers: { notes: { url: notes.url, trust: "untrusted" }, other: { url: notes.url } },
          platforms: {
            webhook: {
              enabled: true,
              secret: "s",
              routes: {
                all: {},
                picked: { toolsets: ["notes"] },
                elsewhere: { toolsets: ["other"] },
                none: { toolsets: ["no_mcp"] },
              },
            },
          },
        }),
      );
      // Subscriptions are routes too (toolsets written into a record by hand); a static route of the same
      // name wins, and a disabled one serves nothing.
      home.write(
        "webhook_subscriptions.json",
        JSON.stringify({
          sub: { secret: "x", toolsets: ["notes"] },
          subnone: { secret: "x", toolsets: ["no_mcp"] },
          all: { secret: "x", toolsets: ["no_mcp"] },
          off: { secret: "x", enabled: false },
        }),
        0o600,
      );
      const result = await svc(home, ["mcp", "tools", "notes"]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("mcp__notes__lookup");
      expect(result.stdout).toContain(
        "Agent runs (agent.provider openai): offered to cron jobs and routes all, picked, sub; not to routes elsewhere, none, subnone (their toolsets name no_mcp or other servers)\n",
      );
      expect(result.stdout).toContain(
        "Refused in runs (untrusted server, no readOnlyHint, gateway.approvals: deny): mcp__notes__delete_item\n",
      );
    } finally {
      home.cleanup();
    }
  });

  it("names only the routes of the profile it connects as (--profile; the default one without)", async () => {
    const home = tempHome();
    try {
      home.write(
        "config.yaml",
        stringify({
          agent: { provider: "openai", model: "m", base_url: "http://127.0.0.1:9/v1" },
          mcp_servers: { notes: { url: notes.url } },
          platforms: {
            webhook: {
              enabled: true,
              secret: "s",
              routes: { mine: {}, theirs: { profile: "work" }, also: { profile: "work" } },
            },
          },
        }),
      );
      home.write("profiles/work/.env", "TEAM=work\n", 0o600);
      const runsLine = (stdout: string) => stdout.split("\n").find((l) => l.startsWith("Agent runs"));
      const own = await svc(home, ["mcp", "tools", "notes"]);
      expect(own.code).toBe(0);
      expect(runsLine(own.stdout)).toBe(
        "Agent runs (agent.provider openai): offered to cron jobs and routes mine",
      );
      const work = await svc(home, ["mcp", "tools", "notes", "--profile", "work"]);
      expect(work.code).toBe(0);
      expect(runsLine(work.stdout)).toBe(
        "Agent runs (agent.provider openai): offered to cron jobs and routes theirs, also",
      );
    } finally {
      home.cleanup();
    }
  });
});
