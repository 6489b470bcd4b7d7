import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { confirmAndInstall, type PromptIO } from "../../../src/cli/mcpAuth.js";
import { parseInstallLink } from "../../../src/io/installLink.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

/** A terminal that answers from a script; `undefined` answers mean stdin closed. */
function scripted(answers: Array<string | undefined>): PromptIO & { out: string[]; asked: string[] } {
  const out: string[] = [];
  const asked: string[] = [];
  return {
    out,
    asked,
    print: (t) => out.push(t),
    ask: async (q) => {
      asked.push(q);
      return answers.shift();
    },
  };
}

const request = (name: string, config: unknown) =>
  parseInstallLink(
    `svc://mcp/install?name=${name}&config=${Buffer.from(JSON.stringify(config)).toString("base64url")}`,
  );

const CONFIG = `# gateway settings
mcp_servers:
  # the team's server
  github:
    url: https://mcp.github.test/ # keep me
`;

describe("install confirmation (spec 4.1)", () => {
  it("writes the entry after a yes, keeping comments, atomically with mode 0600", async () => {
    home = tempHome();
    const path = home.write("config.yaml", CONFIG);
    const io = scripted(["y"]);
    expect(
      await confirmAndInstall(path, request("docs", { url: "https://docs.test/mcp", timeout: 30 }), io),
    ).toBe("docs");
    const text = readFileSync(path, "utf8");
    expect(text).toContain("# the team's server");
    expect(text).toContain("# keep me");
    expect(parse(text).mcp_servers.docs).toEqual({ url: "https://docs.test/mcp", timeout: 30 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("never overwrites an existing name: asks for another, or cancels on empty/closed input", async () => {
    home = tempHome();
    const path = home.write("config.yaml", CONFIG);
    const io = scripted(["bad name!", "github2", "yes"]);
    expect(await confirmAndInstall(path, request("github", { url: "https://evil.test/" }), io)).toBe(
      "github2",
    );
    const servers = parse(readFileSync(path, "utf8")).mcp_servers;
    expect(servers.github.url).toBe("https://mcp.github.test/");
    expect(servers.github2.url).toBe("https://evil.test/");

    const before = readFileSync(path, "utf8");
    expect(
      await confirmAndInstall(path, request("github", { url: "https://x.test/" }), scripted([""])),
    ).toBeUndefined();
    expect(
      await confirmAndInstall(path, request("github", { url: "https://x.test/" }), scripted([undefined])),
    ).toBeUndefined();
    expect(readFileSync(path, "utf8")).toBe(before);
  });

  it("anything but yes, or a closed stdin, installs nothing", async () => {
    home = tempHome();
    const path = home.write("config.yaml", CONFIG);
    for (const io of [scripted(["n"]), scripted([""]), scripted([undefined]), scripted(["yes please"])]) {
      expect(
        await confirmAndInstall(path, request("cmd", { command: "rm", args: ["-rf", "/"] }), io),
      ).toBeUndefined();
    }
    expect(readFileSync(path, "utf8")).toBe(CONFIG);
  });

  it("creates config.yaml when there is none, from the embedded default (the webhook adapter stays on)", async () => {
    home = tempHome();
    const path = join(home.dir, "config.yaml");
    await confirmAndInstall(path, request("one", { url: "http://127.0.0.1:8080/mcp" }), scripted(["y"]));
    expect(parse(readFileSync(path, "utf8"))).toEqual({
      platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 8644 } },
      mcp_servers: { one: { url: "http://127.0.0.1:8080/mcp" } },
    });
  });
});
