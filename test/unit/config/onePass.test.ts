import { afterEach, describe, expect, it } from "vitest";
import { checkedConfig } from "../../../src/gateway/config.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

/** The lines of the error the gateway's start refuses `yaml` with, each without the file's path. */
function refusal(yaml: string, host?: string): { code: string; lines: string[] } {
  home = tempHome();
  home.write("config.yaml", yaml, 0o600);
  try {
    checkedConfig({ home: home.dir, env: {}, ...(host === undefined ? {} : { host }) });
  } catch (err) {
    const { code, message } = err as { code: string; message: string };
    return { code, lines: message.split("\n").map((line) => line.replace(`${home.dir}/config.yaml: `, "")) };
  }
  throw new Error("the config was accepted");
}

const ROUTES = `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
`;

describe("a config.yaml with schema errors: the startup rules are judged in the same pass", () => {
  it("names an unknown key of one route and another route's missing secret and unknown target together", () => {
    const { code, lines } = refusal(`${ROUTES}    routes:
      a: {secret: s, evnts: [push]}
      b: {secret: s, deliver: slak}
      c: {prompt: x}
`);
    expect(code).toBe("config_invalid");
    expect(lines).toEqual([
      'platforms.webhook.routes.a: unknown key "evnts" — did you mean "events"? (see docs/configuration.md)',
      "platforms.webhook.routes.c.secret: missing — set a secret on the route, platforms.webhook.secret, or WEBHOOK_SECRET",
      expect.stringMatching(
        /^platforms\.webhook\.routes\.b\.deliver: unknown target "slak" — did you mean "slack"\?/,
      ),
    ]);
  });

  it("a setting no rule reads (port: x, agent.max_steps, an unknown section) leaves the routes checkable", () => {
    const { lines } = refusal(`${ROUTES}    port: x
    routes:
      c: {prompt: x}
agent: {max_steps: many}
gatway: {}
`);
    expect(lines).toEqual([
      expect.stringMatching(/^agent\.max_steps: expected a number/),
      expect.stringMatching(/^platforms\.webhook\.port: expected a number, got "x"/),
      expect.stringMatching(/^\(top level\): unknown key "gatway"/),
      "platforms.webhook.routes.c.secret: missing — set a secret on the route, platforms.webhook.secret, or WEBHOOK_SECRET",
    ]);
  });

  it("a route whose value failed, or with a misspelling of a key it lacks, is not judged further; the others are", () => {
    const { lines } = refusal(`${ROUTES}    routes:
      a: {secret: 5, deliver: slak}
      b: {secert: s}
      c: {secret: s, deliver: slak}
`);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^platforms\.webhook\.routes\.a\.secret: expected a string/);
    expect(lines[1]).toMatch(/^platforms\.webhook\.routes\.b: unknown key "secert"/);
    expect(lines[2]).toMatch(/^platforms\.webhook\.routes\.c\.deliver: unknown target "slak"/);
  });

  it("a failed setting every route's rules read (the global secret, host, enabled) leaves only the schema's lines", () => {
    for (const setting of ["secret: 5", "host: [a]", "enabled: maybe", "secrte: s"]) {
      const { lines } = refusal(`platforms:
  webhook:
    ${setting}
    routes:
      c: {deliver: slak}
`);
      expect(lines, setting).toHaveLength(1);
      expect(lines[0], setting).not.toMatch(/routes\.c/);
    }
  });

  it("judges INSECURE_NO_AUTH against the address the start binds (--host), as for a valid file", () => {
    const { lines } = refusal(
      `${ROUTES}    routes:
      a: {secret: INSECURE_NO_AUTH, evnts: [push]}
`,
      "0.0.0.0",
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(
      /^platforms\.webhook\.routes\.a\.secret: INSECURE_NO_AUTH is only allowed on a loopback bind/,
    );
  });

  it("only schema errors: the message is the schema's alone", () => {
    const { lines } = refusal(`${ROUTES}    routes:
      a: {secret: s, evnts: [push]}
`);
    expect(lines).toEqual([
      'platforms.webhook.routes.a: unknown key "evnts" — did you mean "events"? (see docs/configuration.md)',
    ]);
  });
});
