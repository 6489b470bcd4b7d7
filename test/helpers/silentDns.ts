import dns from "node:dns";

type Method = (this: unknown, host: unknown, ...rest: unknown[]) => unknown;

/**
 * `dns.lookup` and the Resolver's `resolve4`/`resolve6` (what nodemailer asks), in this process, answered by
 * `answer` for the hosts `picked` picks (given the method's name and its arguments after the host); other
 * hosts are asked as usual. Returns the undo, for the test's end.
 */
function answeredDns(
  picked: (host: string) => boolean,
  answer: (method: string, rest: unknown[]) => unknown,
): () => void {
  const resolver = dns.Resolver.prototype as unknown as Record<string, Method>;
  const module = dns as unknown as Record<string, Method>;
  const undo: Array<() => void> = [];
  const patch = (holder: Record<string, Method>, name: string) => {
    const original = holder[name] as Method;
    holder[name] = function (this: unknown, host: unknown, ...rest: unknown[]) {
      return picked(String(host)) ? answer(name, rest) : original.call(this, host, ...rest);
    };
    undo.push(() => {
      holder[name] = original;
    });
  };
  patch(resolver, "resolve4");
  patch(resolver, "resolve6");
  patch(module, "lookup");
  return () => {
    for (const step of undo.splice(0)) step();
  };
}

/**
 * A DNS server that never answers for the hosts `silent` picks, in this process: `dns.lookup` and the
 * Resolver's `resolve4`/`resolve6` (what nodemailer asks) never call back for them; other hosts are asked as
 * usual. Returns the undo, for the test's end.
 */
export function silentDns(silent: (host: string) => boolean): () => void {
  return answeredDns(silent, () => undefined);
}

/**
 * A DNS server that answers 127.0.0.1 for the hosts `named` picks (a short name, as a compose service's
 * `mail`), in this process: `resolve4` with it, `resolve6` with no address, `dns.lookup` with it (one address,
 * or a list of one with `all`). Returns the undo, for the test's end.
 */
export function loopbackDns(named: (host: string) => boolean): () => void {
  return answeredDns(named, (method, rest) => {
    const callback = rest.at(-1) as (err: null, ...answer: unknown[]) => void;
    const all = method === "lookup" && (rest[0] as { all?: boolean } | undefined)?.all === true;
    queueMicrotask(() => {
      if (method === "resolve4") callback(null, ["127.0.0.1"]);
      else if (method === "resolve6") callback(null, []);
      else if (all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
      else callback(null, "127.0.0.1", 4);
    });
    return undefined;
  });
}
