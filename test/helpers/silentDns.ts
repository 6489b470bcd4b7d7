import dns from "node:dns";

type Method = (this: unknown, host: unknown, ...rest: unknown[]) => unknown;

/**
 * A DNS server that never answers for the hosts `silent` picks, in this process: `dns.lookup` and the
 * Resolver's `resolve4`/`resolve6` (what nodemailer asks) never call back for them; other hosts are asked as
 * usual. Returns the undo, for the test's end.
 */
export function silentDns(silent: (host: string) => boolean): () => void {
  const resolver = dns.Resolver.prototype as unknown as Record<string, Method>;
  const module = dns as unknown as Record<string, Method>;
  const undo: Array<() => void> = [];
  const quiet = (holder: Record<string, Method>, name: string) => {
    const original = holder[name] as Method;
    holder[name] = function (this: unknown, host: unknown, ...rest: unknown[]) {
      return silent(String(host)) ? undefined : original.call(this, host, ...rest);
    };
    undo.push(() => {
      holder[name] = original;
    });
  };
  quiet(resolver, "resolve4");
  quiet(resolver, "resolve6");
  quiet(module, "lookup");
  return () => {
    for (const step of undo.splice(0)) step();
  };
}
