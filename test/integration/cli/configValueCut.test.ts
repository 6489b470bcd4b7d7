import { afterEach, beforeEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

/**
 * A refused value is quoted as its JSON cut at 60 characters (57 and `...`). An emoji is two UTF-16 units:
 * a cut between them printed half of it, which the terminal shows as U+FFFD (`�`).
 */
it("a refused value quoted cut right inside an emoji leaves the emoji out whole", {
  timeout: 60_000,
}, async () => {
  // ["x…x😀…"]: the emoji's first half is the 57th character of the JSON, the last one the cut keeps.
  const prompt = [`${"x".repeat(54)}😀 and more`];
  home.write(
    "config.yaml",
    stringify({
      platforms: { webhook: { enabled: true, host: "127.0.0.1", routes: { r: { secret: "s", prompt } } } },
    }),
  );
  const res = await svc(home, ["config", "check"]);
  expect(res.code).toBe(1);
  expect(res.stderr).toContain(`["${"x".repeat(54)}...`);
  expect(res.stderr).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|\ufffd/);
});
