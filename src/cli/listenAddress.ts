/** `host:port` as an address is written (shared with the listener's errors): `[::1]:8644`. */
export { listenAddress } from "../io/http/listenHint.js";
