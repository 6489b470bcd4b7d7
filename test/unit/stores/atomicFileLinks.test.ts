import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../../src/io/stores/atomicFile.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "svc-atomic-links-"));
  mkdirSync(join(dir, "home"));
  mkdirSync(join(dir, "dotfiles"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A store kept as a symbolic link into a dotfiles checkout, whose file the first write creates. */
describe("writeFileAtomic on a symbolic link to a file not made yet", () => {
  it("writes the file where the link points and keeps the link (it was replaced by a plain file)", () => {
    const link = join(dir, "home", "webhook_subscriptions.json");
    symlinkSync("../dotfiles/subs.json", link);
    writeFileAtomic(link, "{}\n");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, "dotfiles", "subs.json"), "utf8")).toBe("{}\n");
    expect(lstatSync(join(dir, "dotfiles", "subs.json")).mode & 0o777).toBe(0o600);
  });

  it("follows a chain of links to its end", () => {
    const link = join(dir, "home", ".env");
    symlinkSync(join(dir, "dotfiles", "env-link"), link);
    symlinkSync(join(dir, "dotfiles", "env"), join(dir, "dotfiles", "env-link"));
    writeFileAtomic(link, "A=1\n");
    expect(readFileSync(join(dir, "dotfiles", "env"), "utf8")).toBe("A=1\n");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it("a link into a directory that is gone is not followed (nothing is created there): written as named", () => {
    const link = join(dir, "home", "config.yaml");
    symlinkSync(join(dir, "unmounted", "config.yaml"), link);
    writeFileAtomic(link, "x: 1\n");
    expect(lstatSync(link).isFile()).toBe(true);
    expect(() => lstatSync(join(dir, "unmounted"))).toThrow();
  });
});
