import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runAnswering, svc } from "./svc.js";

let home: TempHome;
let desktop: TempHome;
afterEach(() => {
  home.cleanup();
  desktop.cleanup();
});

/** The Exec= line's arguments (Desktop Entry quoting: "..." with \-escapes), `%u` replaced by `link`. */
function execArgs(entry: string, link: string): string[] {
  const exec = /^Exec=(.*)$/m.exec(entry)?.[1] ?? "";
  return [...exec.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map(([, quoted, bare]) =>
    quoted !== undefined ? quoted.replace(/\\(.)/g, "$1") : bare === "%u" ? link : (bare as string),
  );
}

describe("svc mcp install --register-handler (spec 4.1): the registered command works as the desktop runs it", {
  timeout: 90_000,
}, () => {
  it("runs this svc with its node flags, and installs into the SVC_HOME it was registered from", async () => {
    home = tempHome();
    desktop = tempHome();
    const xdg = join(desktop.dir, "share");
    const registered = await svc(home, ["mcp", "install", "--register-handler"], {
      env: { XDG_DATA_HOME: xdg },
    });
    expect(registered.code).toBe(0);
    const entry = readFileSync(join(xdg, "applications", "svc-mcp-install.desktop"), "utf8");
    const link = `svc://mcp/install?name=docs&config=${Buffer.from('{"url":"https://docs.test/mcp"}').toString("base64url")}`;
    // The desktop's environment: another HOME and no SVC_HOME.
    const code = await runAnswering(
      execArgs(entry, link),
      { PATH: process.env.PATH ?? "", HOME: desktop.dir },
      "y\n",
    );
    expect(code).toBe(0);
    expect(parse(readFileSync(join(home.dir, "config.yaml"), "utf8")).mcp_servers).toEqual({
      docs: { url: "https://docs.test/mcp" },
    });
  });

  it("a relative XDG_DATA_HOME is ignored, as the XDG spec says: the file goes to ~/.local/share/applications", async () => {
    home = tempHome();
    desktop = tempHome();
    // Relative, yet from any working directory it names a directory inside the temp dir (where a wrong
    // write would land, not in the checkout).
    const relative = `${"../".repeat(40)}${desktop.dir.replace(/^\/+/, "")}/relative-share`;
    const result = await svc(home, ["mcp", "install", "--register-handler"], {
      env: { XDG_DATA_HOME: relative, HOME: desktop.dir },
    });
    expect(result.code).toBe(0);
    const file = join(desktop.dir, ".local", "share", "applications", "svc-mcp-install.desktop");
    expect(result.stdout).toContain(`Wrote ${file}`);
    expect(readFileSync(file, "utf8")).toContain("MimeType=x-scheme-handler/svc;");
    expect(existsSync(join(desktop.dir, "relative-share"))).toBe(false);
  });

  it("an xdg-mime that fails is reported as failing with its reason, not as not found", async () => {
    home = tempHome();
    desktop = tempHome();
    const fake = desktop.write(
      "bin/xdg-mime",
      '#!/bin/sh\necho "xdg-mime: no method available for setting the default handler" >&2\nexit 3\n',
    );
    chmodSync(fake, 0o755);
    const result = await svc(home, ["mcp", "install", "--register-handler"], {
      env: {
        XDG_DATA_HOME: join(desktop.dir, "share"),
        PATH: `${join(desktop.dir, "bin")}:${process.env.PATH ?? ""}`,
      },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("not found");
    expect(result.stdout).toContain(
      "; xdg-mime default svc-mcp-install.desktop x-scheme-handler/svc exited with 3: xdg-mime: no method available for setting the default handler, so svc:// links are not set to open with it — run that command again, or register the file with your desktop",
    );
  });
});
