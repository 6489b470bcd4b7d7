import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemOrHome } from "../../../src/io/dataDirsWritable.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let dir: TempHome;
afterEach(() => dir.cleanup());

/**
 * A data directory's link into a user's home is never given away, but this user's own home is its own: seen (a
 * service account svc, HOME /var/lib/svc, `state -> /var/lib/svc` holding a root run's LOCK and journal) "… is the
 * home directory of svc …, so it is not to be given away".
 */
describe("a link's target that is a user's home", () => {
  it("this user's own home is none of another's; another user's, and one holding it, are", () => {
    dir = tempHome();
    const own = join(dir.dir, "var", "lib", "svc");
    const other = join(dir.dir, "home", "alice");
    mkdirSync(own, { recursive: true });
    mkdirSync(other, { recursive: true });
    const uid = process.getuid?.() ?? 0;
    const passwd = dir.write(
      "passwd",
      [
        `svc:x:${uid}:${uid}::${own}:/usr/sbin/nologin`,
        `alice:x:${uid + 1}:${uid + 1}::${other}:/bin/sh`,
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
        "",
      ].join("\n"),
    );
    expect(systemOrHome(own, passwd)).toBeUndefined();
    expect(systemOrHome(other, passwd)).toBe("is the home directory of alice");
    expect(systemOrHome(join(dir.dir, "home"), passwd)).toBe(`holds ${other}, the home directory of alice`);
    expect(systemOrHome("/usr", passwd)).toBe("is one of the system's own directories");
  });
});
