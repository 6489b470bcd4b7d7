import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

/**
 * docs/configuration.md, "What a variable gives is never quoted back": a config error about a value a
 * `${VAR}` gave quotes the file's text (`"${SLACK_TOKEN}" (the value it gives is not shown)`), in `svc config
 * check`, in the refused start of `svc gateway run` and in the reload's line in gateway.log. Before, a
 * credential put in such a variable by mistake was printed whole (`unknown target "xoxb-…"`).
 */
const SLACK_TOKEN = "xoxb-SLACKTOKEN_mistake_1234";
const OPENAI_API_KEY = "sk-MISTAKEKEY_12345678";
// TEST-NET-1 (RFC 5737): never an address of this machine, and no name to resolve.
const BIND_HOST = "192.0.2.77";
const DOTENV = `SLACK_TOKEN=${SLACK_TOKEN}\nOPENAI_API_KEY=${OPENAI_API_KEY}\nBIND_HOST=${BIND_HOST}\n`;

const UNKNOWN_TARGET = `platforms.webhook.routes.a.deliver: unknown target "$\{SLACK_TOKEN}" (the value it gives is not shown) — use one of log,`;
const UNKNOWN_PROVIDER = `agent.provider: unknown provider "$\{OPENAI_API_KEY}" (the value it gives is not shown) — use one of echo, command, openai, anthropic`;
const NOT_THIS_MACHINE = `the value $\{BIND_HOST} gives is not an address of this machine — set platforms.webhook.host (or --host) to one of its addresses, 0.0.0.0 or 127.0.0.1`;

let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

function homeWith(config: Record<string, unknown>): TempHome {
  const made = tempHome();
  made.write("config.yaml", stringify(config), 0o600);
  made.write(".env", DOTENV, 0o600);
  return made;
}

const leaks = (text: string) =>
  [SLACK_TOKEN, OPENAI_API_KEY, BIND_HOST].filter((value) => text.includes(value));

describe(`a config error about a value a $\{VAR} gave`, { timeout: 60_000 }, () => {
  it("svc config check and svc gateway run name the deliver and provider as the file writes them", async () => {
    home = homeWith(
      cliConfig(
        { a: { secret: "s3cret-s3cret", deliver: `$\{SLACK_TOKEN}` } },
        { agent: { provider: `$\{OPENAI_API_KEY}` } },
      ),
    );
    const file = join(home.dir, "config.yaml");
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(`${file}: ${UNKNOWN_PROVIDER}`);
    expect(check.stderr).toContain(`${file}: ${UNKNOWN_TARGET}`);
    expect(leaks(check.stdout + check.stderr)).toEqual([]);
    const run = await svc(home, ["gateway", "run", "--port", "0"], { timeoutMs: 20_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(UNKNOWN_PROVIDER);
    expect(run.stderr).toContain(UNKNOWN_TARGET);
    expect(leaks(run.stdout + run.stderr)).toEqual([]);
  });

  it("a host it gave that the gateway cannot listen on, and the loopback rule it breaks", async () => {
    const onHost = (secret: string) => {
      const config = cliConfig({ a: { secret } });
      (config.platforms as { webhook: Record<string, unknown> }).webhook.host = `$\{BIND_HOST}`;
      return config;
    };
    home = homeWith(onHost("INSECURE_NO_AUTH"));
    const file = join(home.dir, "config.yaml");
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      `${file}: platforms.webhook.routes.a.secret: INSECURE_NO_AUTH is only allowed on a loopback bind (127.0.0.1, localhost, ::1), but host is "\${BIND_HOST}" (the value it gives is not shown) — set a real secret or bind to 127.0.0.1`,
    );
    expect(check.stderr).toContain(
      `${file}: platforms.webhook.host: cannot listen on "\${BIND_HOST}" (the value it gives is not shown) (`,
    );
    expect(check.stderr).toContain(NOT_THIS_MACHINE);
    expect(leaks(check.stdout + check.stderr)).toEqual([]);
    // The listener's own refusal, once the rules pass.
    home.write("config.yaml", stringify(onHost("s3cret-s3cret")), 0o600);
    const run = await svc(home, ["gateway", "run", "--port", "0"], { timeoutMs: 20_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `cannot listen on "\${BIND_HOST}" (the value it gives is not shown), port 0 — ${NOT_THIS_MACHINE}`,
    );
    expect(leaks(run.stdout + run.stderr)).toEqual([]);
  });

  it("svc config check names a route's profile a variable gave as the file writes it, and no path made from it", async () => {
    const PROFILE = "sk-SECRETVALUE-0008";
    home = homeWith({
      ...cliConfig({ r2: { secret: "s3cret-s3cret", profile: `$\{S8}` } }),
      mcp_servers: { one: { command: "sh", args: [`$\{S2}`] } },
    });
    home.write(".env", `${DOTENV}S8=${PROFILE}\nS2=x\n`, 0o600);
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(0);
    expect(check.stderr).toContain(
      `platforms.webhook.routes.r2.profile: the binding to profile "\${S8}" (the value it gives is not shown) is not enforced — gateway.multiplex_profiles is off, so the route answers at /webhooks/r2; set gateway.multiplex_profiles: true to serve it at /p/<profile>/webhooks/r2 only`,
    );
    expect(check.stderr).toContain(
      `mcp_servers.one: \${S2} is not set for profile "\${S8}" (the value it gives is not shown), whose runs connect with its own .env — add S2=... to that profile's .env (in its directory under ${join(home.dir, "profiles")}) or the environment`,
    );
    expect(`${check.stdout}${check.stderr}`).not.toContain(PROFILE);
  });

  it("the same edit and a SIGHUP: the reload's refusal in gateway.log names the variable, not its value", async () => {
    home = homeWith(cliConfig({ a: { secret: "s3cret-s3cret" } }));
    const running = await runForeground(home);
    gateway = running;
    home.write(
      "config.yaml",
      stringify(cliConfig({ a: { secret: "s3cret-s3cret", deliver: `$\{SLACK_TOKEN}` } })),
      0o600,
    );
    running.child.kill("SIGHUP");
    const gatewayLog = () => readFileSync(join((home as TempHome).dir, "logs", "gateway.log"), "utf8");
    await waitFor(
      () => gatewayLog().includes("reload refused, keeping the running config"),
      "the refusal in gateway.log",
    );
    const log = gatewayLog();
    expect(log).toContain(`${join(home.dir, "config.yaml")}: ${UNKNOWN_TARGET}`);
    expect(leaks(log)).toEqual([]);
    expect(leaks(running.stdout() + running.stderr())).toEqual([]);
  });
});
