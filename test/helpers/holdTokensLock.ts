// Run with `node --import tsx`: takes the tokens lock of server <server> in <dir> (as a refresh does), says
// "held" on stdout, and holds it until killed (its heartbeat touching the lock meanwhile).
import { TokenStore } from "../../src/io/oauth/tokenStore.js";

const [dir, server] = process.argv.slice(2) as [string, string];
// The lock's heartbeat keeps no process alive by itself.
setInterval(() => undefined, 1 << 30);
await new TokenStore(dir, server).withLock(async () => {
  process.stdout.write("held\n");
  await new Promise(() => undefined);
});
