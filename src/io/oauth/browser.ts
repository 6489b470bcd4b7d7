import { execa } from "execa";

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

/** Opens the authorization URL: `$BROWSER` when set, else the `open` package (xdg-open, open, start). */
export async function openInBrowser(url: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const argv = browserCommand(url, env);
  if (argv !== undefined) {
    const [file, ...args] = argv as [string, ...string[]];
    const child = execa(file, args, { detached: true, stdio: "ignore", env, reject: false });
    child.catch(() => {});
    child.unref?.();
    return;
  }
  const { default: open } = await import("open");
  const child = await open(url, { wait: false });
  child.on("error", () => {});
  child.unref();
}
