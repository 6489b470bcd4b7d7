import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const CONFIG = `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    port: x
    routes:
      a: {secret: s, evnts: [push]}
      b: {secret: s, deliver: slak}
      c: {prompt: x}
`;

describe("svc config check and the gateway's start name schema errors and startup-rule problems in one pass", {
  timeout: 60_000,
}, () => {
  it("lists the unknown key and the failed port with the other routes' missing secret and unknown target", async () => {
    home = tempHome();
    home.write("config.yaml", CONFIG, 0o600);
    const file = `${home.dir}/config.yaml`;
    const expected = [
      `${file}: platforms.webhook.port: expected a number, got "x" — write a plain number, without units or quotes`,
      `${file}: platforms.webhook.routes.a: unknown key "evnts" — did you mean "events"? (see docs/configuration.md)`,
      `${file}: platforms.webhook.routes.c.secret: missing — set a secret on the route, platforms.webhook.secret, or WEBHOOK_SECRET`,
      expect.stringMatching(
        /^\/.*config\.yaml: platforms\.webhook\.routes\.b\.deliver: unknown target "slak" — did you mean "slack"\?/,
      ),
    ];
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr.trimEnd().split("\n")).toEqual(expected);
    expect(check.stdout).toBe("4 problems: the gateway would not start\n");

    const run = await svc(home, ["gateway", "run", "--port", "0"], { timeoutMs: 20_000 });
    expect(run.code).toBe(1);
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines[0]).toBe(`svc: ${expected[0]}`);
    expect(lines.slice(1)).toEqual(expected.slice(1));
  });

  it("names a route's missing script beside another route's startup problem", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    routes:
      c: {prompt: x}
      d: {secret: s, script: nothere.js}
`,
      0o600,
    );
    const file = `${home.dir}/config.yaml`;
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr.trimEnd().split("\n")).toEqual([
      `Warning: ${file}: platforms.webhook.routes.d.script: nothere.js — script not found (scripts live in ${home.dir}/scripts); until it is there every event on this route is ignored`,
      `${file}: platforms.webhook.routes.c.secret: missing — set a secret on the route, platforms.webhook.secret, or WEBHOOK_SECRET`,
    ]);
    expect(check.stdout).toBe("1 problem: the gateway would not start\n");
  });

  it("names a checkable route's missing script beside the schema's errors", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    port: x
    routes:
      d: {secret: s, script: nothere.js, evnts: [push]}
      e: {secret: 5, script: gone.js}
`,
      0o600,
    );
    const file = `${home.dir}/config.yaml`;
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr.trimEnd().split("\n")).toEqual([
      `Warning: ${file}: platforms.webhook.routes.d.script: nothere.js — script not found (scripts live in ${home.dir}/scripts); until it is there every event on this route is ignored`,
      expect.stringMatching(/platforms\.webhook\.port: expected a number/),
      expect.stringMatching(/platforms\.webhook\.routes\.d: unknown key "evnts"/),
      expect.stringMatching(/platforms\.webhook\.routes\.e\.secret: expected a string/),
    ]);
    expect(check.stdout).toBe("3 problems: the gateway would not start\n");
  });
});
