import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const HEAD = "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    secret: s3cret\n";

/**
 * `filters` written as one mapping instead of a list is read as that one filter: every message about it
 * names its keys as the file writes them (`filters.in_file`), never a `filters[0]` the file does not have,
 * in config.yaml (directly or under extra.routes) and in a subscription record alike.
 */
describe("svc config check: a filters mapping is named as written", { timeout: 60_000 }, () => {
  it("warnings: an in_file list that is not there, an unset ${VAR}, a subscription's bad value; a list's entry keeps its index", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      `${HEAD}    routes:\n` +
        "      one:\n        filters: {field: action, in_file: nope.txt}\n" +
        "      unset:\n        filters: {field: '${NO_SUCH_FIELD_VAR}', exists: true}\n" +
        "      listed:\n        filters: [{field: action, in_file: gone.txt}]\n" +
        "    extra:\n      routes:\n        grouped:\n          filters: {any: [{field: a, in_file: lost.txt}]}\n",
      0o600,
    );
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        sub: { secret: "abc", filters: { field: "a", in_file: "missing.txt" } },
        bad: { secret: "abc", filters: { field: "a", in: "x" } },
      }),
      0o600,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    const out = result.stderr + result.stdout;
    expect(out).toContain("platforms.webhook.routes.one.filters.in_file: nope.txt");
    expect(out).toContain("platforms.webhook.routes.unset.filters.field: ${NO_SUCH_FIELD_VAR} is not set");
    expect(out).toContain("platforms.webhook.extra.routes.grouped.filters.any[0].in_file: lost.txt");
    expect(out).toContain("sub.filters.in_file: missing.txt");
    expect(out).toContain('bad.filters.in: expected a list, got "x"');
    expect(out).toContain("platforms.webhook.routes.listed.filters[0].in_file: gone.txt");
    expect(out).not.toMatch(/\.(one|unset|grouped)\.filters\[0\]|(sub|bad)\.filters\[0\]/);
  });

  it("errors: a filter with two operators, a value of the wrong type, one inside not", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      `${HEAD}    routes:\n` +
        "      two:\n        filters: {field: a, equals: 1, contains: 2}\n" +
        "      typed:\n        filters: {field: action, in: opened}\n" +
        "    extra:\n      routes:\n        deep:\n          filters: {not: {field: a, in: []}}\n",
      0o600,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(1);
    const out = result.stderr + result.stdout;
    expect(out).toContain("platforms.webhook.routes.two.filters: a filter needs exactly one operator");
    expect(out).toContain('platforms.webhook.routes.typed.filters.in: expected a list, got "opened"');
    expect(out).toContain(
      "platforms.webhook.extra.routes.deep.filters.not.in: an empty list matches nothing",
    );
    expect(out).not.toContain("filters[0]");
  });
});
