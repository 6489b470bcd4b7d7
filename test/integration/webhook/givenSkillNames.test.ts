import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";
const NOT_SHOWN = "(the value it gives is not shown)";
const v = (name: string) => `$\{${name}}`;

/**
 * docs/configuration.md, "What a variable gives is never quoted back", at a route's first run: a `skills`
 * entry a `${VAR}` gave is named as config.yaml writes it in the run's warnings, with no name to write made
 * from it and no path built from it. Before, `skill "sk-SECRETVALUE-77/deploy" is not a skill name … — write
 * deploy` and `skill "sk-SECRETVALUE-88" not found (no …/skills/sk-SECRETVALUE-88/SKILL.md)` were logged.
 */
describe(`the skills a $\{VAR} gave, at a route's first run`, () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        ".env": [
          "SK=sk-SECRETVALUE-77/deploy",
          "SK2=sk-SECRETVALUE-88",
          "SK3=sk-SECRETVALUE-broken",
          "SK4=sk-SECRETVALUE-found",
          "",
        ].join("\n"),
        // A SKILL.md that is there but cannot be read (a directory: EISDIR).
        "skills/sk-SECRETVALUE-broken/SKILL.md/keep": "",
        "skills/sk-SECRETVALUE-found/SKILL.md": "Found it.\n",
        "skills/plain-broken/SKILL.md/keep": "",
      },
      config: webhookConfig(
        {
          hook: { secret: OPEN, prompt: "go", skills: [v("SK"), v("SK2"), v("SK3"), v("SK4")] },
          // Written in the file: named as before, path and all.
          plain: {
            secret: OPEN,
            prompt: "go",
            skills: ["cat/plain", "plain-missing", "plain-broken", v("SK4")],
          },
        },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  const warnings = (route: string) =>
    gw
      .logs()
      .map((l) => l.msg)
      .filter((msg) => msg.startsWith(`[webhook] ${route}: skill `));

  it("names each entry by the file's text, the skills directory without the name, and the skill loaded instead", async () => {
    const res = await postJson(gw.url("/webhooks/hook"), {});
    const run = await waitForRun(gw, res.body.delivery_id as string);
    expect(run.prompt).toBe("# Skill: sk-SECRETVALUE-found\n\nFound it.\n\n# Event\n\ngo");
    const skills = join(gw.home.dir, "skills");
    const instead = `; loaded "${v("SK4")}" ${NOT_SHOWN} instead`;
    await vi.waitFor(() => expect(warnings("hook")).toHaveLength(3));
    expect(warnings("hook")).toEqual([
      `[webhook] hook: skill "${v("SK")}" ${NOT_SHOWN} is not a skill name (letters, digits, ".", "_" and "-", no path)${instead}`,
      `[webhook] hook: skill "${v("SK2")}" ${NOT_SHOWN} not found (no skill of the name it gives under ${skills})${instead}`,
      `[webhook] hook: skill "${v("SK3")}" ${NOT_SHOWN} not loaded: its SKILL.md (under ${skills}) cannot be read (EISDIR) — check that it is a file the gateway's user may read${instead}`,
    ]);
    const log = gw
      .logs()
      .map((l) => l.msg)
      .join("\n");
    expect(log).not.toContain("SECRETVALUE");
  });

  it("a name written in the file is named as before, its fix and paths with it", async () => {
    const res = await postJson(gw.url("/webhooks/plain"), {});
    await waitForRun(gw, res.body.delivery_id as string);
    const skills = join(gw.home.dir, "skills");
    const instead = `; loaded "${v("SK4")}" ${NOT_SHOWN} instead`;
    await vi.waitFor(() => expect(warnings("plain")).toHaveLength(3));
    expect(warnings("plain")).toEqual([
      `[webhook] plain: skill "cat/plain" is not a skill name (letters, digits, ".", "_" and "-", no path) — write plain, the skill's directory name (found at skills/plain/ or skills/<category>/plain/)${instead}`,
      `[webhook] plain: skill "plain-missing" not found (no ${skills}/plain-missing/SKILL.md)${instead}`,
      `[webhook] plain: skill "plain-broken" not loaded: ${join(skills, "plain-broken", "SKILL.md")} cannot be read (EISDIR) — check that it is a file the gateway's user may read${instead}`,
    ]);
  });
});
