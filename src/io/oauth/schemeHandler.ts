import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { writeFileAtomic } from "../stores/atomicFile.js";

export const DESKTOP_FILE = "svc-mcp-install.desktop";

/**
 * The directory for .desktop files: `$XDG_DATA_HOME/applications`, else `~/.local/share/applications`. A
 * relative XDG_DATA_HOME is ignored, as the XDG Base Directory specification says: the desktop would never
 * look for the file under this command's working directory.
 */
export function applicationsDir(env: NodeJS.ProcessEnv = process.env): string {
  const set = env.XDG_DATA_HOME?.trim() ? (env.XDG_DATA_HOME as string) : undefined;
  const base = set !== undefined && isAbsolute(set) ? set : join(homedir(), ".local", "share");
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

/** What became of `xdg-mime default`: it set the handler, is not installed, or failed (why, in one line). */
export type XdgMimeOutcome = { readonly set: true } | { readonly set: false; readonly failed?: string };

/**
 * Registers svc as the handler of `svc://` links on Linux: writes the .desktop file and, when
 * `xdg-mime` exists, makes it the default. Returns the file written and what xdg-mime did.
 */
export async function registerSchemeHandler(
  svcCommand: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ file: string; xdgMime: XdgMimeOutcome }> {
  const file = join(applicationsDir(env), DESKTOP_FILE);
  writeFileAtomic(file, desktopEntry(svcCommand), 0o644);
  const { execa } = await import("execa");
  try {
    await execa("xdg-mime", XDG_MIME_ARGS, { env, timeout: 10_000 });
    return { file, xdgMime: { set: true } };
  } catch (err) {
    const failure = err as { code?: string; exitCode?: number; timedOut?: boolean; stderr?: unknown };
    if (failure.code === "ENOENT") return { file, xdgMime: { set: false } };
    const said =
      String(failure.stderr ?? "")
        .trim()
        .split("\n")[0] ?? "";
    const how =
      failure.timedOut === true
        ? "did not finish within 10 s"
        : failure.exitCode !== undefined
          ? `exited with ${failure.exitCode}`
          : `could not run (${failure.code ?? "unknown error"})`;
    return { file, xdgMime: { set: false, failed: `${how}${said === "" ? "" : `: ${said.slice(0, 200)}`}` } };
  }
}

/** `xdg-mime default svc-mcp-install.desktop x-scheme-handler/svc`. */
export const XDG_MIME_ARGS = ["default", DESKTOP_FILE, "x-scheme-handler/svc"];
