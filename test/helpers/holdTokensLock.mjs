// `node [loader] holdTokensLock.mjs <dir> <server> <tokenStore module>`: takes the tokens lock of server
// <server> in <dir> (as a refresh does) through the TokenStore of <tokenStore module> (svcModule's path: the
// build when current, so no loader compiles svc at each start), says "held" on stdout, and holds it until
// killed (its heartbeat touching the lock meanwhile).
import { pathToFileURL } from "node:url";

const [dir, server, tokenStore] = process.argv.slice(2);
const { TokenStore } = await import(pathToFileURL(tokenStore).href);
// The lock's heartbeat keeps no process alive by itself.
setInterval(() => undefined, 1 << 30);
await new TokenStore(dir, server).withLock(async () => {
  process.stdout.write("held\n");
  await new Promise(() => undefined);
});
