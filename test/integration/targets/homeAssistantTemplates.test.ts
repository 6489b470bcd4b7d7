import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor } from "./support.js";

/**
 * Home Assistant reads a notify service's `message` and `title` as Jinja templates (`cv.template`) and
 * renders them: a text holding `{{`, `{%` or `{#` is refused when it is no valid template, and rendered
 * (its expressions replaced) when it is. This fake does what Home Assistant does with such text it cannot
 * render: it answers 400. Text without those delimiters is plain text to Home Assistant.
 */
const TEMPLATE = /\{\{|\{%|\{#/;
let ha: FakeApi;
beforeAll(async () => {
  ha = await startFakeApi((request) => {
    const body = request.json as { message?: string; title?: string };
    if (TEMPLATE.test(body.message ?? "") || TEMPLATE.test(body.title ?? ""))
      return { status: 400, json: { message: "Invalid template (TemplateSyntaxError: unexpected '}')" } };
    return { json: [] };
  });
});
afterAll(() => ha.close());

const ZWSP = /\u200B/g;
const sent = () => ha.requests.map((r) => r.json as { message: string; title?: string });

describe("home_automation: payload text with template delimiters", () => {
  it.each([
    ["notify", { chat_id: "mobile_app_pixel_8", title: "Deploy {{ env }}" }],
    ["persistent notification", { title: "{%- if x %}" }],
  ])("%s: the text arrives as written, not read as a template", async (_, extra) => {
    ha.requests.length = 0;
    const registry = registryFor({
      home_automation: { enabled: true, token: "HA-TEMPLATE-TOKEN", base_url: ha.url },
    });
    // A GitHub Actions expression, as a CI event quotes it.
    const text = `Set $${"{{"} secrets.DEPLOY_KEY }} in the workflow {% raw %} {# note #} {{ }`;
    await expect(registry.get("home_automation")?.send(message(text, extra))).resolves.toBeDefined();
    const [request] = sent();
    expect(request?.message.replace(ZWSP, "")).toBe(text);
    expect(request?.title?.replace(ZWSP, "")).toBe(extra.title);
    expect(request?.message).not.toMatch(TEMPLATE);
  });

  it("text without delimiters is sent unchanged", async () => {
    ha.requests.length = 0;
    const registry = registryFor({
      home_automation: { enabled: true, token: "HA-TEMPLATE-TOKEN", base_url: ha.url },
    });
    await registry.get("home_automation")?.send(message("Door {open} % # {x}", { service: "mobile_app_x" }));
    expect(sent()).toEqual([{ message: "Door {open} % # {x}" }]);
  });
});
