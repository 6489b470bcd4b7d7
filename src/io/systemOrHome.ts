import { lstatSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathWithin } from "./pathWithin.js";
import { terminalText } from "./terminalText.js";

/**
 * The system's own directories, never svc's to give away however they were made, nor any that holds one (`/`):
 * a link into one is refused outright, as is one to another user's home (`usersHomes`); nor to open to this user
 * (`chmod o+x /root`: closedDir.ts).
 */
const SYSTEM_DIRS =
  /^\/(?:usr|home|var|var\/lib|var\/lib\/private|var\/log|var\/cache|run|etc|srv|opt|root|boot|lib[^/]*|bin|sbin|proc|sys|dev|tmp)?$/;

/**
 * The system's own directories whose whole subtree is the system's too (`/etc/ssl/private`, `/root/.ssh`): nothing
 * below one is svc's to give away, open, move or point elsewhere, wherever SVC_HOME is. `/dev/shm` (a tmpfs, TMPDIR on
 * some machines) is every user's, as `/tmp` is. `/var/lib`, `/var/log`, `/var/cache` and `/run` are not among them:
 * a service's own directory is made there (`/var/lib/svc`, systemd's StateDirectory=), so only they themselves are
 * the system's (SYSTEM_DIRS).
 */
const SYSTEM_TREES = /^\/(?:etc|usr|boot|dev(?!\/shm\/)|root|proc|sys)(?=\/)/;

/** A user's home directory, as `passwd` names it. */
interface UserHome {
  readonly user: string;
  readonly home: string;
}

/** The home directories `passwd` (/etc/passwd) names, each with whether it is this user's (its uid's). */
function passwdHomes(passwd: string): (UserHome & { readonly own: boolean })[] {
  const uid = process.getuid?.();
  try {
    return readFileSync(passwd, "utf8")
      .split("\n")
      .map((line) => line.split(":"))
      .filter((fields) => fields.length >= 7 && fields[5]?.startsWith("/") === true)
      .map((fields) => ({
        user: fields[0] ?? "",
        home: resolve(fields[5] ?? "/"),
        own: uid !== undefined && fields[2] === String(uid),
      }))
      .filter(({ home }) => home !== "/" && home !== "/nonexistent");
  } catch {
    return [];
  }
}

/**
 * Why `real` is the system's, or another user's home, or in one, or holds one, and so not to be given away, opened,
 * moved or pointed elsewhere whatever it holds; undefined when it is none of those. The system's own directories
 * are `/`, `/home`, `/var`, `/var/lib`, `/var/log`, `/var/cache`, `/run`, `/opt`, `/srv`, `/tmp` and the like
 * themselves, and `/etc`, `/usr`, `/boot`, `/dev`, `/root`, `/proc`, `/sys` with all below them; the homes are
 * the other users' as `passwd` (/etc/passwd; a test's) names them. This user's own home, and what is below it, is
 * its own wherever it is (a service account's `/var/lib/svc`; root's `/root`, but for `/root` itself).
 */
export function systemOrHome(real: string, passwd = "/etc/passwd"): string | undefined {
  const path = resolve(real);
  if (SYSTEM_DIRS.test(path)) return "is one of the system's own directories";
  const homes = passwdHomes(passwd);
  const own = homes.some((user) => user.own && pathWithin(path, user.home));
  const tree = own ? null : SYSTEM_TREES.exec(path);
  if (tree !== null) return `is in ${tree[0]}, one of the system's own directories`;
  for (const { user, home, own: mine } of homes) {
    if (mine) continue;
    if (home === path) return `is the home directory of ${terminalText(user)}`;
    // Below a system account's home that is one of the system's own directories (sys's /dev, bin's /bin): said by
    // the system's rules above, which leave `/dev/shm` to every user.
    if (pathWithin(path, home) && !SYSTEM_DIRS.test(home))
      return `is in ${terminalText(home)}, the home directory of ${terminalText(user)}`;
    if (pathWithin(home, path))
      return `holds ${terminalText(home)}, the home directory of ${terminalText(user)}`;
  }
  return undefined;
}

/**
 * Whether the symbolic link `link` is this user's to point elsewhere, or to make its target: one it owns, in none of
 * the system's own directories nor another user's home (`systemOrHome`). `/etc/localtime` on the way to SVC_HOME is
 * the system's, whoever runs svc (root owns it): only SVC_HOME is to be set. False when it cannot be looked at.
 */
export function ownLink(link: string, passwd?: string): boolean {
  try {
    if (lstatSync(link).uid !== process.getuid?.()) return false;
  } catch {
    return false;
  }
  return systemOrHome(link, passwd) === undefined;
}
