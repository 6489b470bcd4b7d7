import { userInfo } from "node:os";

/** The user svc runs as, by name where it has one (a container's arbitrary uid may have none). */
export function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? "this user");
  }
}

/** This user as a message names it, with its uid: `this user (nobody, uid 65534)`. */
export function thisUser(): string {
  const uid = process.getuid?.();
  return `this user (${userName()}${uid === undefined ? "" : `, uid ${uid}`})`;
}
