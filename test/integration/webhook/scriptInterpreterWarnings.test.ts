import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A route script runs under bash (`.sh`, `.bash`) or python3 (every other name), whatever its `#!` line says.
 * A script whose `#!` line asks for another program is named at startup with what to do, since each of its
 * events would otherwise be ignored with nothing but the interpreter's syntax error to go by.
 */

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const OPEN = { secret: "INSECURE_NO_AUTH" };

describe("a route script whose #! line asks for another interpreter than the one svc runs it with", () => {
  it("is named in a WARN at startup with the fix; scripts whose #! line agrees are not", async () => {
    gw = await startTestGateway({
      config: webhookConfig({
        node_js: { ...OPEN, script: "notify.js" },
        bash_noext: { ...OPEN, script: "tools/deploy" },
        python_sh: { ...OPEN, script: "summarize.sh" },
        env_python: { ...OPEN, script: "env.py" },
        plain_sh: { ...OPEN, script: "plain.sh" },
        bash_sh: { ...OPEN, script: "strict.bash" },
        no_line: { ...OPEN, script: "bare.py" },
      }),
      files: {
        "scripts/notify.js": '#!/usr/bin/env node\nconsole.log("{}")\n',
        "scripts/tools/deploy": "#!/bin/bash -e\ncat\n",
        "scripts/summarize.sh": "#!/usr/bin/env -S python3 -u\nprint('{}')\n",
        "scripts/env.py": "#!/usr/bin/env PYTHONUTF8=1 python3\nprint('{}')\n",
        "scripts/plain.sh": "#!/bin/sh\ncat\n",
        "scripts/strict.bash": "#!/usr/bin/env bash\ncat\n",
        "scripts/bare.py": "print('{}')\n",
      },
    });
    const running = gw;
    const warnings = () =>
      running
        .logs()
        .filter((l) => l.level === 40 && l.msg.includes(".script: "))
        .map((l) => l.msg);
    await vi.waitFor(() => expect(warnings().length).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    expect(warnings()).toContainEqual(
      expect.stringMatching(
        /routes\.node_js\.script: notify\.js — its #! line asks for node, but svc runs it with python3 \(\.sh and \.bash files with bash, every other file with python3\), so each event is ignored while python3 cannot run it — call it from a \.sh script beside it: exec node "\$\(dirname "\$0"\)\/notify\.js"$/,
      ),
    );
    expect(warnings()).toContainEqual(
      expect.stringMatching(
        /routes\.bash_noext\.script: tools\/deploy — its #! line asks for bash, but svc runs it with python3 .* — rename it to deploy\.sh and write script: tools\/deploy\.sh$/,
      ),
    );
    expect(warnings()).toContainEqual(
      expect.stringMatching(
        /routes\.python_sh\.script: summarize\.sh — its #! line asks for python3, but svc runs it with bash .* — rename it to summarize\.py and write script: summarize\.py$/,
      ),
    );
    for (const agrees of ["env_python", "plain_sh", "bash_sh", "no_line"])
      expect(warnings().some((w) => w.includes(`routes.${agrees}.`))).toBe(false);
  });

  it("is still run the documented way: with python3 for a name that does not end in .sh or .bash", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ shell: { ...OPEN, script: "deploy", prompt: "{script_output}" } }),
      files: { "scripts/deploy": '#!/bin/bash\necho "from bash"\n' },
    });
    const res = await postJson(gw.url("/webhooks/shell"), { a: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ignored", reason: "script" });
  });
});
