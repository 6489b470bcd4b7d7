import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runAnswering, svc } from "./svc.js";

const hasGio = spawnSync("gio", ["version"]).status === 0;

let home: TempHome;
let desktop: TempHome;
afterEach(() => {
  home?.cleanup();
  desktop?.cleanup();
});

/**
 * A stand-in terminal for GLib (`Terminal=true` runs `xterm -e <argv>`): it records the argv GLib
 * made from the Exec line, so the test can run it with a piped answer (GLib gives the child no stdin).
 */
function fakeTerminal(dir: string, argvFile: string): string {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    join(bin, "xterm"),
    `#!/usr/bin/env node\nconst a = process.argv.slice(2);\nif (a[0] === "-e") a.shift();\nrequire("node:fs").writeFileSync(${JSON.stringify(argvFile)}, JSON.stringify(a));\n`,
    { mode: 0o755 },
  );
  return bin;
}

describe("svc mcp install --register-handler: the .desktop file as GLib (gio launch) reads it", {
  timeout: 90_000,
}, () => {
  it.skipIf(!hasGio)(
    "an SVC_HOME with % and $ in its path reaches the command unchanged (Exec: %% and \\\\$)",
    async () => {
      home = tempHome();
      desktop = tempHome();
      const svcHome = join(home.dir, "100%done $x");
      mkdirSync(svcHome);
      const xdg = join(desktop.dir, "share");
      const registered = await svc(home, ["mcp", "install", "--register-handler"], {
        env: { XDG_DATA_HOME: xdg, SVC_HOME: svcHome },
      });
      expect(registered.code).toBe(0);
      const argvFile = join(desktop.dir, "argv.json");
      const bin = fakeTerminal(desktop.dir, argvFile);
      const link = `svc://mcp/install?name=docs&config=${Buffer.from('{"url":"https://docs.test/mcp"}').toString("base64url")}`;
      const launched = spawnSync(
        "gio",
        ["launch", join(xdg, "applications", "svc-mcp-install.desktop"), link],
        {
          env: { PATH: `${bin}:${process.env.PATH ?? ""}`, HOME: desktop.dir },
          encoding: "utf8",
          timeout: 20_000,
        },
      );
      expect(launched.stderr).toBe("");
      for (let i = 0; i < 100; i++) {
        try {
          readFileSync(argvFile);
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      const argv = JSON.parse(readFileSync(argvFile, "utf8")) as string[];
      expect(argv).toContain(`SVC_HOME=${svcHome}`);
      const code = await runAnswering(argv, { PATH: process.env.PATH ?? "", HOME: desktop.dir }, "y\n");
      expect(code).toBe(0);
      expect(parse(readFileSync(join(svcHome, "config.yaml"), "utf8")).mcp_servers).toEqual({
        docs: { url: "https://docs.test/mcp" },
      });
    },
  );
});
