import { type AddressInfo, Server } from "node:net";
import { afterEach, vi } from "vitest";

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

/** The takers of a describe block (`takeReleasedPorts` into it): after each test, the spy is ended and they are closed. */
export function portTakers(): Server[] {
  const takers: Server[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    for (const taker of takers.splice(0)) taker.close();
  });
  return takers;
}
