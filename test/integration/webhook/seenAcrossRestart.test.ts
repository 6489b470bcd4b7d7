import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { createLogger } from "../../../src/io/log.js";
import { seenKey } from "../../../src/streams/stages/idempotency.js";
import { startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";

const SEEN = "webhook-seen-ids.json";

/** A fresh SVC_HOME with one unsigned route, `open`, answered by the echo agent. */
function homeWithOpenRoute(): TempHome {
  const home = tempHome();
  home.write(
    "config.yaml",
    stringify(webhookConfig({ open: { secret: "INSECURE_NO_AUTH" } }, {}, { agent: { provider: "echo" } })),
  );
  return home;
}

describe("delivery ids seen before a restart are still duplicates after it (spec 6: cached for 1 hour)", () => {
  let home: TempHome;
  let gateway: Gateway | undefined;
  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    home.cleanup();
  });

  const post = (id: string) =>
    postJson(`http://127.0.0.1:${gateway?.port}/webhooks/open`, { n: 1 }, { "X-Request-ID": id });

  it("a retry after a restart answers 200 duplicate; ids saved 0600; a new id still runs", async () => {
    home = homeWithOpenRoute();
    gateway = await startGatewayInHome(home);
    expect(await post("before-restart")).toMatchObject({ status: 202, body: { status: "accepted" } });
    await gateway.stop();
    expect(statSync(join(home.dir, SEEN)).mode & 0o777).toBe(0o600);

    gateway = await startGatewayInHome(home);
    expect(existsSync(join(home.dir, SEEN))).toBe(false);
    expect(await post("before-restart")).toMatchObject({ status: 200, body: { status: "duplicate" } });
    expect(await post("after-restart")).toMatchObject({ status: 202, body: { status: "accepted" } });
  });

  it("ids whose hour is over are not restored; an unreadable file is reported, and the journal's ids still count", async () => {
    home = homeWithOpenRoute();
    const ids = [
      [seenKey("open", "old"), Date.now() - 1000],
      [seenKey("open", "recent"), Date.now() + 60_000],
    ];
    home.write(SEEN, JSON.stringify({ version: 1, ids }));
    gateway = await startGatewayInHome(home);
    expect((await post("old")).status).toBe(202);
    expect((await post("recent")).body).toEqual({ status: "duplicate" });
    await gateway.stop();

    home.write(SEEN, "{ not json");
    gateway = await startGatewayInHome(home);
    expect((await post("fresh")).status).toBe(202);
    // The local journal kept the ids the unreadable file held: the warning says so, and a retry is a duplicate.
    expect((await post("old")).body).toEqual({ status: "duplicate" });
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log).toContain("could not be read; the journal");
    expect(log).toContain(
      "keeps the delivery ids seen before the restart, so their retries are still duplicates",
    );
  });

  it("an unreadable file with the journal deleted (state/ removed) is said as forgotten: the journal replayed none, and a retry runs", async () => {
    home = homeWithOpenRoute();
    gateway = await startGatewayInHome(home);
    expect((await post("before-restart")).status).toBe(202);
    await gateway.stop();
    gateway = undefined;
    const saved = readFileSync(join(home.dir, SEEN), "utf8");
    rmSync(join(home.dir, "state"), { recursive: true });
    home.write(SEEN, saved.slice(0, Math.floor(saved.length / 2))); // torn

    gateway = await startGatewayInHome(home);
    expect(await post("before-restart")).toMatchObject({ status: 202, body: { status: "accepted" } });
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log).toContain(
      `${join(home.dir, SEEN)} could not be read, and the journal (${join(home.dir, "state")}) replayed no delivery ids (it was removed, or started afresh); delivery ids seen before the restart are forgotten (their retries will run)`,
    );
    expect(log).not.toContain("so their retries are still duplicates");
  });

  it("a file that cannot be read at all (a directory in its place) is kept aside and said with the read error, not as JSON it is not", async () => {
    home = homeWithOpenRoute();
    mkdirSync(join(home.dir, SEEN));
    gateway = await startGatewayInHome(home);
    expect((await post("fresh")).status).toBe(202);
    expect(readdirSync(home.dir).filter((name) => name.startsWith(`${SEEN}.unreadable-`))).toHaveLength(1);
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log).toContain(`${join(home.dir, SEEN)}: cannot be read (EISDIR`);
    expect(log).not.toContain("not valid JSON");
  });

  it("a file a newer version wrote (another format version) is kept aside as it was and said, not overwritten at stop", async () => {
    home = homeWithOpenRoute();
    const newer = `${JSON.stringify({ version: 2, ids: [[seenKey("open", "n"), Date.now() + 60_000, "x"]] })}\n`;
    home.write(SEEN, newer);
    gateway = await startGatewayInHome(home);
    expect((await post("fresh")).status).toBe(202);
    await gateway.stop();
    gateway = undefined;

    const aside = readdirSync(home.dir).filter((name) => name.startsWith(`${SEEN}.unreadable-`));
    expect(aside.length).toBe(1);
    expect(readFileSync(join(home.dir, aside[0] as string), "utf8")).toBe(newer);
    // The stop saved this run's ids to the usual name, beside the kept file.
    expect(JSON.parse(readFileSync(join(home.dir, SEEN), "utf8"))).toMatchObject({ version: 1 });
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    // A fresh home's journal replayed none of its ids: forgotten.
    expect(log).toContain(`${join(home.dir, SEEN)} could not be read, and the journal`);
    expect(log).toContain(
      `the file is kept as ${join(home.dir, aside[0] as string)}: inspect it, then delete it`,
    );
    expect(log).toContain("format version 2, written by a newer version of svc (this one reads version 1)");
  });

  it("a start that fails (its port is taken) keeps the saved ids for the next start", async () => {
    home = homeWithOpenRoute();
    gateway = await startGatewayInHome(home);
    expect((await post("before-restart")).status).toBe(202);
    await gateway.stop();
    gateway = undefined;

    // A program that closes what it accepts: the failed start asks what holds the port (GET /health), and
    // a connection left open on a server that never reads would hold its close.
    const taken = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      await expect(
        startGateway({
          home: home.dir,
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir },
          port,
          logger: createLogger({ file: join(home.dir, "logs", "gateway.log"), stdout: false }),
        }),
      ).rejects.toThrow(/cannot listen/);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    expect(existsSync(join(home.dir, SEEN))).toBe(true);

    gateway = await startGatewayInHome(home);
    expect(existsSync(join(home.dir, SEEN))).toBe(false);
    expect(await post("before-restart")).toMatchObject({ status: 200, body: { status: "duplicate" } });
  });

  it("a second gateway on the same SVC_HOME is refused while the first runs; the first keeps answering", async () => {
    home = homeWithOpenRoute();
    gateway = await startGatewayInHome(home);
    await expect(startGatewayInHome(home)).rejects.toThrow(
      `the state directory ${join(home.dir, "state")} is already open in this process (another gateway started on the same SVC_HOME) — stop that one first`,
    );
    expect(await post("still-served")).toMatchObject({ status: 202, body: { status: "accepted" } });
  });
});
