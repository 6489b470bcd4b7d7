import { type AddressInfo, Server } from "node:net";
import { vi } from "vitest";

/**
 * Takes each port a node:net server of this process lets go, `times` times, before its close is reported:
 * a listener bound on it the moment it is let go, as another socket may take a port picked by a bind
 * that was given up. `vi.restoreAllMocks()` ends it; close the takers after.
 */
export function takeReleasedPorts(takers: Server[], times: number): void {
  const close = Server.prototype.close;
  vi.spyOn(Server.prototype, "close").mockImplementation(function (this: Server, done) {
    const address = this.address() as AddressInfo | null;
    if (takers.length >= times || address === null) return close.call(this, done);
    return close.call(this, (err) => {
      const taker = new Server();
      takers.push(taker);
      taker.listen({ host: "127.0.0.1", port: address.port, exclusive: true }, () => done?.(err));
    });
  });
}

export const takenPort = (taker: Server) => (taker.address() as AddressInfo).port;
