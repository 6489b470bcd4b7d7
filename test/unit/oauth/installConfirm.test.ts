import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { confirmAndInstall, type PromptIO } from "../../../src/cli/mcpAuth.js";
import { loadConfig } from "../../../src/config/load.js";
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

  it("a server whose name config.yaml writes as a YAML number or boolean (007:, True:) is taken under that name, never overwritten", async () => {
    home = tempHome();
    const path = home.write(
      "config.yaml",
      "mcp_servers:\n  007:\n    url: https://bond.example/mcp\n  True:\n    url: https://truth.example/mcp\n",
    );
    const before = readFileSync(path, "utf8");
    for (const name of ["007", "True"]) {
      const io = scripted(["", "y"]);
      expect(
        await confirmAndInstall(path, request(name, { url: "https://evil.example/" }), io),
      ).toBeUndefined();
      expect(io.asked[0]).toContain(`A server named "${name}" already exists`);
    }
    expect(readFileSync(path, "utf8")).toBe(before);
    // 7 and true are other servers than 007 and True (svc reads a key as written): installed beside them.
    expect(
      await confirmAndInstall(path, request("7", { url: "https://seven.example/" }), scripted(["y"])),
    ).toBe("7");
    const servers = loadConfig({ home: home.dir }).config.mcp_servers;
    expect(Object.keys(servers).sort()).toEqual(["007", "7", "True"]);
    expect(servers["007"]?.url).toBe("https://bond.example/mcp");
  });

  it("a config.yaml whose top level is no mapping is named as the gateway names it, before the question; the file is kept", async () => {
    home = tempHome();
    const cases: Array<[string, string]> = [
      ["- platforms\n", "a list"],
      ["webhook-gateway\n", '"webhook-gateway"'],
      ["8644\n", "8644"],
    ];
    for (const [text, got] of cases) {
      const path = home.write("config.yaml", text);
      const io = scripted(["y"]);
      await expect(
        confirmAndInstall(path, request("docs", { url: "https://docs.example/mcp" }), io),
      ).rejects.toThrow(
        `${path}: the top level must be a mapping of sections (platforms:, agent:, gateway:, mcp_servers:), got ${got} — fix it before running svc mcp install`,
      );
      expect(io.asked).toEqual([]);
      expect(readFileSync(path, "utf8")).toBe(text);
    }
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
