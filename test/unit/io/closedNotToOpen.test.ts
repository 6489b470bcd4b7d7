import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { closedDirectory, closedFix } from "../../../src/io/closedDir.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { refusing } from "../../helpers/refusing.js";

let dir: TempHome;
afterEach(() => dir.cleanup());

const INSTEAD = "point the link at a directory this user can reach";

/**
 * Seen (as nobody, `state -> /root/.bashrc`): "on the way to it, /root (owned by uid 0) cannot be looked into by this
 * user — … let this user look into it (chmod o+x /root, as its owner or root)": a chmod of the system's own directory,
 * or of another user's home, opens it to every user, and following it showed only that the target is a file.
 */
describe("a closed directory on the way that is the system's or another user's home", () => {
  it("is not to be opened: no chmod, what to point elsewhere instead", () => {
    dir = tempHome();
    const alice = join(dir.dir, "home", "alice");
    mkdirSync(alice, { recursive: true });
    const passwd = dir.write("passwd", `alice:x:4242:4242::${alice}:/bin/sh\n`);
    const root = closedDirectory("/root/.bashrc", passwd, refusing("/root"));
    expect(root).toMatchObject({ dir: "/root", notToOpen: "is one of the system's own directories" });
    expect(root?.fix).toBeUndefined();
    expect(root === undefined ? undefined : closedFix(root, INSTEAD, true)).toBe(
      `/root is one of the system's own directories, not to be opened to this user: ${INSTEAD}`,
    );
    const home = closedDirectory(join(alice, "f"), passwd, refusing(alice));
    expect(home?.fix).toBeUndefined();
    expect(home === undefined ? undefined : closedFix(home, INSTEAD)).toBe(
      `${alice} is the home directory of alice, not to be opened to this user: ${INSTEAD}`,
    );
  });

  it("any other is let in with its chmod, or the link pointed elsewhere", () => {
    dir = tempHome();
    const priv = join(dir.dir, "priv");
    mkdirSync(priv);
    const passwd = dir.write("passwd", "");
    const closed = closedDirectory(join(priv, "f"), passwd, refusing(priv));
    const uid = statSync(priv).uid;
    const letIn =
      uid === process.getuid?.()
        ? `let this user look into it (chmod u+x ${priv})`
        : `let this user look into it (chmod o+x ${priv}, as its owner or root)`;
    expect(closed?.fix).toBe(letIn);
    expect(closed === undefined ? undefined : closedFix(closed, INSTEAD, true)).toBe(
      `${letIn}, or ${INSTEAD}`,
    );
  });
});
