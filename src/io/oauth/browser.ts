import { basename } from "node:path";
import { SvcError } from "../../errors.js";
import { importExternal } from "../importExternal.js";

/**
 * `$BROWSER` (colon-separated commands, `%s` for the URL, else the URL appended): the first entry
 * is run without a shell. Returns the argv, or undefined when the variable is unset.
 */
export function browserCommand(url: string, env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  const first = env.BROWSER?.split(":")
    .map((s) => s.trim())
    .find((s) => s !== "");
  if (first === undefined) return undefined;
  const words = first.split(/\s+/);
  return words.some((w) => w.includes("%s")) ? words.map((w) => w.replaceAll("%s", url)) : [...words, url];
}

/**
 * Opens the authorization URL: `$BROWSER` when set, else the `open` package (xdg-open, open, start).
 * Only http(s): the URL comes from the authorization server's metadata, and xdg-open or the desktop would
 * hand a `file:` or custom-scheme URL to whatever program handles it.
 */
export async function openInBrowser(url: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  if (scheme !== "http" && scheme !== "https") {
    throw new SvcError(
      "oauth",
      `not opening a ${scheme === undefined ? "relative" : `${scheme}:`} URL in a browser — a login URL must be http or https; check the authorization server's authorization_endpoint`,
    );
  }
  const argv = browserCommand(url, env);
  if (argv !== undefined) {
    const [file, ...args] = argv as [string, ...string[]];
    const { execa } = await import("execa");
    const child = execa(file, args, { detached: true, stdio: "ignore", env, reject: false });
    child.catch(() => {});
    child.unref?.();
    // A $BROWSER that cannot be started (not found, not executable) is reported, so the login can say
    // to open the printed URL instead of waiting silently.
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (err: NodeJS.ErrnoException) =>
        reject(new SvcError("oauth", `$BROWSER ${file} could not be started (${err.code ?? err.message})`)),
      );
    });
    return;
  }
  const { default: open } = await importExternal<typeof import("open")>("open");
  const child = await open(url, { wait: false });
  child.unref();
  // The launcher (xdg-open, open) exits at once, with a failing status when it found no browser to hand
  // the URL to (xdg-open's 3 on a host without one): reported, so the login says to open the printed URL.
  const launcher = basename(child.spawnfile);
  await new Promise<void>((resolve, reject) => {
    child.once("error", (err: NodeJS.ErrnoException) =>
      reject(new SvcError("oauth", `${launcher} could not be started (${err.code ?? err.message})`)),
    );
    child.once("exit", (code) =>
      code === 0 || code === null
        ? resolve()
        : reject(new SvcError("oauth", `${launcher} found no browser to open it (exit status ${code})`)),
    );
  });
}

/**
 * Whether the browser a login opens may not be on this machine: a session over SSH (where a browser
 * elsewhere cannot reach the callback on this machine's loopback), or Linux without a display and without
 * a `$BROWSER`. An empty variable counts as unset.
 */
export function mayHaveNoLocalBrowser(env: NodeJS.ProcessEnv = process.env): boolean {
  const set = (name: string) => (env[name] ?? "") !== "";
  if (set("SSH_CONNECTION") || set("SSH_CLIENT") || set("SSH_TTY")) return true;
  return process.platform === "linux" && !set("DISPLAY") && !set("WAYLAND_DISPLAY") && !set("BROWSER");
}
