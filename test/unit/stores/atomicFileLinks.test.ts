import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
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

  it("a `..` in the link's text after a name that is a link goes up from where that link leads, as the system reads it", () => {
    // `ln -s ../dotfiles/deep home/lnk; ln -s lnk/../store/subs.json home/webhook_subscriptions.json`: the file is
    // dotfiles/store/subs.json (lnk/.. is dotfiles/), not home/store/subs.json, the link's text collapsed.
    mkdirSync(join(dir, "dotfiles", "deep"));
    mkdirSync(join(dir, "dotfiles", "store"));
    mkdirSync(join(dir, "home", "store"));
    symlinkSync("../dotfiles/deep", join(dir, "home", "lnk"));
    const link = join(dir, "home", "webhook_subscriptions.json");
    symlinkSync("lnk/../store/subs.json", link);
    writeFileAtomic(link, "{}\n");
    expect(readFileSync(join(dir, "dotfiles", "store", "subs.json"), "utf8")).toBe("{}\n");
    // Seen: written to home/store/subs.json, and read back through the link as no file.
    expect(existsSync(join(dir, "home", "store", "subs.json"))).toBe(false);
    expect(readFileSync(link, "utf8")).toBe("{}\n");
  });

  it("a relative link in a directory reached through a link is read from the directory it really is in", () => {
    // `ln -s <dir>/home elsewhere/h2`: h2/.env -> ../dotfiles/env is <dir>/dotfiles/env, not elsewhere/dotfiles/env.
    mkdirSync(join(dir, "elsewhere", "dotfiles"), { recursive: true });
    symlinkSync(join(dir, "home"), join(dir, "elsewhere", "h2"));
    symlinkSync("../dotfiles/env", join(dir, "home", ".env"));
    const link = join(dir, "elsewhere", "h2", ".env");
    writeFileAtomic(link, "A=1\n");
    expect(readFileSync(join(dir, "dotfiles", "env"), "utf8")).toBe("A=1\n");
    expect(existsSync(join(dir, "elsewhere", "dotfiles", "env"))).toBe(false);
    expect(lstatSync(join(dir, "home", ".env")).isSymbolicLink()).toBe(true);
  });

  it("follows a chain of 35 links to its end, as the system does (up to 40), rather than taking it for a loop", () => {
    let next = join(dir, "dotfiles", "env");
    for (let n = 0; n < 34; n++) {
      const link = join(dir, "dotfiles", `l${n}`);
      symlinkSync(next, link);
      next = link;
    }
    const link = join(dir, "home", ".env");
    symlinkSync(next, link);
    writeFileAtomic(link, "A=1\n");
    expect(readFileSync(join(dir, "dotfiles", "env"), "utf8")).toBe("A=1\n");
    // Seen: the link replaced by a plain file, the chain left leading to nothing.
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });
});
