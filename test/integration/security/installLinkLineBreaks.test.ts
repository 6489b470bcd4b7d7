import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svcEach } from "../cli/svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const FAKE = "Installed mcp_servers.gh.";
const link = (name: string, config: unknown) =>
  `svc://mcp/install?name=${encodeURIComponent(name)}&config=${Buffer.from(JSON.stringify(config)).toString("base64url")}`;

it("a rejected install link's own text (its name, a key of its config) cannot start a line of the rejection: a line break shows as \\n", async () => {
  home = tempHome();
  const [byName, byKey] = await svcEach(
    home,
    [
      ["mcp", "install", link(`gh\n${FAKE}`, { url: "https://docs.test/mcp" })],
      ["mcp", "install", link("gh", { command: "npx", [`x\n${FAKE}`]: 1 })],
    ],
    { input: "y\n" },
  );
  for (const res of [byName, byKey]) {
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    // One line: the link's text cannot put a line of its own under the rejection.
    expect(res.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(res.stderr).toMatch(/^svc: install link rejected: /);
    expect(res.stderr).not.toMatch(new RegExp(`^${FAKE}`, "m"));
  }
  expect(byName.stderr).toContain(`name "gh\\n${FAKE}" is not a valid server name`);
  expect(byKey.stderr).toContain(`unknown key "x\\n${FAKE}"`);
  expect(existsSync(join(home.dir, "config.yaml"))).toBe(false);
});
