import { readFileSync } from "node:fs";
import { resolve, sep } from "node:path";
import { terminalText } from "./terminalText.js";

/**
 * The system's own directories, never svc's to give away however they were made, nor any that holds one (`/`):
 * a link into one is refused outright, as is one to another user's home (`usersHomes`); nor to open to this user
 * (`chmod o+x /root`: closedDir.ts).
 */
const SYSTEM_DIRS = /^\/(?:usr|home|var|etc|srv|opt|root|boot|lib[^/]*|bin|sbin|proc|sys|dev|tmp)?$/;

/**
 * The other users' home directories, as `passwd` (/etc/passwd) names them (none that is `/`, or one none has): this
 * user's own (a service account's HOME, `/var/lib/svc`, where a root run left its state) is none of another's.
 */
function usersHomes(passwd: string): { readonly user: string; readonly home: string }[] {
  const uid = process.getuid?.();
  try {
    return readFileSync(passwd, "utf8")
      .split("\n")
      .map((line) => line.split(":"))
      .filter((fields) => fields.length >= 7 && fields[5]?.startsWith("/") === true)
      .filter((fields) => uid === undefined || fields[2] !== String(uid))
      .map((fields) => ({ user: fields[0] ?? "", home: resolve(fields[5] ?? "/") }))
      .filter(({ home }) => home !== "/" && home !== "/nonexistent");
  } catch {
    return [];
  }
}

/**
 * Why `real` is the system's, or another user's home, or holds one, and so not to be given away whatever it holds;
 * undefined when it is none of those. `passwd`: where the users are read (a test's).
 */
export function systemOrHome(real: string, passwd = "/etc/passwd"): string | undefined {
  const holds = (dir: string) => dir === real || dir.startsWith(real === sep ? real : `${real}${sep}`);
  if (SYSTEM_DIRS.test(real)) return "is one of the system's own directories";
  for (const { user, home } of usersHomes(passwd)) {
    if (home === real) return `is the home directory of ${terminalText(user)}`;
    if (holds(home)) return `holds ${terminalText(home)}, the home directory of ${terminalText(user)}`;
  }
  return undefined;
}
