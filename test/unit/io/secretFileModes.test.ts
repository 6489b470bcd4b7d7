import { chmodSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { secretFiles, secretFilesReadableByOthers } from "../../../src/io/secretFileModes.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

/** Writes a file under the home with exactly `mode`, whatever the umask. */
function writeWithMode(relative: string, mode: number): string {
  const path = home.write(relative, "X=1\n");
  chmodSync(path, mode);
  return path;
}

describe("secret files readable by other users", () => {
  it("names every profile's .env and MCP tokens, not only the default profile's .env", () => {
    home = tempHome();
    const env = writeWithMode(".env", 0o600);
    const workEnv = writeWithMode("profiles/work/.env", 0o644);
    const token = writeWithMode("profiles/work/mcp-tokens/notes.json", 0o640);
    const client = writeWithMode("mcp-tokens/notes.client.json", 0o604);
    // Discovery metadata holds no secret.
    writeWithMode("mcp-tokens/notes.meta.json", 0o644);
    const subs = writeWithMode("webhook_subscriptions.json", 0o600);
    expect(secretFiles(home.dir)).toEqual([
      env,
      join(home.dir, "mcp-tokens", "notes.client.json"),
      workEnv,
      token,
      subs,
    ]);
    expect(secretFilesReadableByOthers(secretFiles(home.dir))).toEqual([
      `${client} holds secrets but is readable by other users (mode 0604) — chmod 600 ${client}`,
      `${workEnv} holds secrets but is readable by other users (mode 0644) — chmod 600 ${workEnv}`,
      `${token} holds secrets but is readable by other users (mode 0640) — chmod 600 ${token}`,
    ]);
  });

  it("says writable, not readable, of a file whose group or others may only write it", () => {
    home = tempHome();
    const env = writeWithMode(".env", 0o620);
    expect(secretFilesReadableByOthers(secretFiles(home.dir))).toEqual([
      `${env} holds secrets but is writable by other users (mode 0620) — chmod 600 ${env}`,
    ]);
  });

  it("says nothing of files that are absent or 0600", () => {
    home = tempHome();
    writeWithMode(".env", 0o600);
    writeWithMode("profiles/work/mcp-tokens/notes.json", 0o600);
    expect(secretFilesReadableByOthers(secretFiles(home.dir))).toEqual([]);
  });
});
