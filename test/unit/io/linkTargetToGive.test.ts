import { chmodSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { linkTargetToGive } from "../../../src/io/dataDirsWritable.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let dir: TempHome;
afterEach(() => dir.cleanup());

/**
 * A directory's entries as svc lists them (a directory's with a final `/`, sorted), but `closed` refused as another
 * user is refused a directory of root's with mode 0700 (this test may run as root, whom no mode stops).
 */
const listingAsAnotherUser =
  (closed: string) =>
  (at: string): string[] => {
    if (at.replace(/\/$/, "") === closed)
      throw Object.assign(new Error(`EACCES: permission denied, opendir '${at}'`), { code: "EACCES" });
    return readdirSync(at, { withFileTypes: true })
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
      .sort();
  };

/**
 * Seen (as nobody, `sessions -> appdata`, root's 0755 appdata holding root's 0700 private/ and a readable
 * public/id_rsa): "… appdata (owned by uid 0) cannot be looked into by this user, so what it holds is unknown: if it
 * holds only svc's data, give it to this user: chown -R nobody …/appdata", though appdata itself was listed and
 * public/id_rsa, none of svc's, could be seen.
 */
describe("a link's target with a subdirectory this user cannot list", () => {
  function appdata(): { home: string; target: string; closed: string; mode: string } {
    dir = tempHome();
    const home = join(dir.dir, "home");
    mkdirSync(home);
    const target = join(dir.dir, "appdata");
    const closed = join(target, "private");
    mkdirSync(closed, { recursive: true });
    dir.write("appdata/private/id_rsa", "key");
    chmodSync(closed, 0o700);
    mkdirSync(join(target, "public"));
    const mode = `owned by uid ${statSync(closed).uid}, mode 0700`;
    return { home, target, closed, mode };
  }

  it("names a foreign entry found past it, not the target as one that cannot be looked into", () => {
    const { home, target, closed } = appdata();
    dir.write("appdata/public/id_rsa", "key");
    expect(linkTargetToGive(target, "sessions", home, home, listingAsAnotherUser(closed))).toEqual({
      why: "is not svc's own and holds public/id_rsa, which svc does not keep there",
    });
  });

  it("with no foreign entry found, names that subdirectory as what cannot be looked into", () => {
    const { home, target, closed, mode } = appdata();
    dir.write("appdata/public/chat.jsonl", "{}\n");
    expect(linkTargetToGive(target, "sessions", home, home, listingAsAnotherUser(closed))).toEqual({
      closed: `${closed} (${mode})`,
    });
    // Listed whole, it holds what svc does not keep there.
    expect(linkTargetToGive(target, "sessions", home, home)).toEqual({
      why: "is not svc's own and holds private/id_rsa, which svc does not keep there",
    });
  });

  it("the target itself unlisted is unknown as before", () => {
    const { home, target } = appdata();
    expect(linkTargetToGive(target, "sessions", home, home, listingAsAnotherUser(target))).toBeUndefined();
  });
});
