import { homedir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "../stores/atomicFile.js";

export const DESKTOP_FILE = "svc-mcp-install.desktop";

/** The directory for .desktop files: `$XDG_DATA_HOME/applications`, else `~/.local/share/applications`. */
export function applicationsDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME?.trim() ? (env.XDG_DATA_HOME as string) : join(homedir(), ".local", "share");
  return join(base, "applications");
}

function desktopEntry(svcCommand: readonly string[]): string {
  // Desktop Entry spec, Exec key: each argument quoted, with ", `, $ and \ escaped by a backslash inside
  // the quotes; string values are unescaped before that quoting, so the backslash is written \\ (a
  // literal \ is \\\\), and a literal % is %% (else `%d` in a path is a field code and is dropped).
  const quote = (arg: string) =>
    `"${arg
      .replace(/\\/g, "\\\\\\\\")
      .replace(/(["`$])/g, "\\\\$1")
      .replace(/%/g, "%%")
      .replace(/\n/g, "\\n")}"`;
  return [
    "[Desktop Entry]",
    "Type=Application",
    "Name=svc MCP install link",
    "NoDisplay=true",
    "Terminal=true",
    `Exec=${[...svcCommand.map(quote), "mcp", "install", "%u"].join(" ")}`,
    "MimeType=x-scheme-handler/svc;",
    "",
  ].join("\n");
}

/**
 * Registers svc as the handler of `svc://` links on Linux: writes the .desktop file and, when
 * `xdg-mime` exists, makes it the default. Returns the file written and whether xdg-mime ran.
 */
export async function registerSchemeHandler(
  svcCommand: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ file: string; xdgMime: boolean }> {
  const file = join(applicationsDir(env), DESKTOP_FILE);
  writeFileAtomic(file, desktopEntry(svcCommand), 0o644);
  const { execa } = await import("execa");
  try {
    await execa("xdg-mime", ["default", DESKTOP_FILE, "x-scheme-handler/svc"], { env, timeout: 10_000 });
    return { file, xdgMime: true };
  } catch {
    return { file, xdgMime: false };
  }
}
