import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const stored = () => JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));

describe("svc webhook subscribe on a hand-written record (spec 2.6)", { timeout: 60_000 }, () => {
  it("writes the properties no option changed as the file has them, not with their defaults filled in", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    const coalesce = { key: "pull_request.number" };
    const filters = { field: "action", in: ["opened"] };
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ prs: { secret: "handwritten-secret-qwerty", prompt: "PR {n}", coalesce, filters } }),
      0o600,
    );
    const res = await svc(home, ["webhook", "subscribe", "prs", "--description", "pull requests"]);
    expect(res.code).toBe(0);
    // Before, the rewrite pinned the defaults (window_seconds 30, max_wait_seconds 300) into the record
    // and turned the single filter mapping into a list: the file no longer said what its author wrote.
    expect(stored().prs).toMatchObject({ coalesce, filters, description: "pull requests" });
    expect(stored().prs.coalesce).toEqual(coalesce);
    // A property an option changes is written as the option says.
    expect((await svc(home, ["webhook", "subscribe", "prs", "--prompt", "New {n}"])).code).toBe(0);
    expect(stored().prs).toMatchObject({ prompt: "New {n}", coalesce, filters });
  });

  it("names a hand-written toolsets name that is no toolset, a disabled MCP server there and a skill written as a path, as each load of the subscriptions does", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(
        cliConfig(
          {},
          {
            agent: { provider: "command", command: [process.execPath, "--version"] },
            mcp_servers: { docs: { command: process.execPath, args: ["--version"], enabled: false } },
          },
        ),
      ),
    );
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        hx: { secret: "handwritten-secret-hx", toolsets: ["web_serch", "docs"], skills: ["skills/triage"] },
        ok: { secret: "handwritten-secret-ok", toolsets: ["terminal"] },
      }),
      0o600,
    );
    const res = await svc(home, ["webhook", "subscribe", "hx", "--description", "x"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      'Warning: hx: toolsets: unknown toolset "web_serch" — did you mean web_search?; runs of the route drop it',
    );
    expect(res.stderr).toContain(
      'Warning: hx: toolsets: "docs" names mcp_servers.docs, which has enabled: false',
    );
    expect(res.stderr).toContain('Warning: hx: skills: "skills/triage" is ');
    expect(stored().hx).toMatchObject({ toolsets: ["web_serch", "docs"], description: "x" });
    const clean = await svc(home, ["webhook", "subscribe", "ok", "--description", "y"]);
    expect(clean.code).toBe(0);
    expect(clean.stderr).not.toContain("Warning: ok: toolsets");
  });

  // Written back through svc's own walks, which went on the call stack: refused as "nested too deep" from
  // ~2,500 levels once the file kept any number as written (a deliver_extra id, 1.50), ~4,000 with none.
  for (const [depth, leaf] of [
    [4000, "1"],
    [3500, "1.50"],
  ] as const)
    it(`writes back a hand-written record nested ${depth} levels deep around ${leaf}, beside a numeric deliver_extra id`, async () => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig()));
      const deep = `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
      home.write(
        "webhook_subscriptions.json",
        `{\n"s0": {"secret": "${"a".repeat(64)}", "deliver": "log", "x": ${deep}},\n"s1": {"secret": "${"b".repeat(64)}", "deliver": "telegram", "deliver_extra": {"chat_id": 123456789012345678901}}\n}\n`,
        0o600,
      );
      const res = await svc(home, ["webhook", "subscribe", "s2", "--prompt", "hi"]);
      expect(res.stderr).not.toContain("nested too deep");
      expect(res.code).toBe(0);
      const text = readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8").replace(/\s+/g, "");
      expect(text).toContain(`"x":${deep}`);
      expect(text).toContain('"deliver_extra":{"chat_id":"123456789012345678901"}');
      expect(Object.keys(stored())).toEqual(["s0", "s1", "s2"]);
    });
});
