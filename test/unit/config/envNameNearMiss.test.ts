import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { envNameNearMiss } from "../../../src/config/envNearMiss.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
let project: TempHome;
const cwd = process.cwd();
afterEach(() => {
  process.chdir(cwd);
  home.cleanup();
  project.cleanup();
});

describe("envNameNearMiss: where a ${VAR} set nowhere was likely meant to come from", () => {
  it("a .env in the working directory (where dotenv and docker compose read theirs) that sets it", () => {
    home = tempHome();
    project = tempHome();
    const env = home.write(".env", "OTHER=1\n");
    const here = project.write(".env", "GITHUB_WEBHOOK_SECRET=abc\n");
    process.chdir(project.dir);
    expect(envNameNearMiss(env, "GITHUB_WEBHOOK_SECRET")).toBe(
      ` (${here} sets it, but svc reads only ${env} and the environment, not a .env in the working directory — move the line to ${env})`,
    );
    // Not when the working directory is SVC_HOME itself, whose .env is svc's.
    process.chdir(home.dir);
    expect(envNameNearMiss(join(home.dir, ".env"), "GITHUB_WEBHOOK_SECRET")).toBe("");
  });

  it("a name .env sets only after a value named it: on its own line (S=${S}-x) or on a line above", () => {
    home = tempHome();
    project = tempHome();
    process.chdir(project.dir);
    const env = home.write(".env", "S=${S}-x\nA=${B}\nB=1\n");
    for (const name of ["S", "B"])
      expect(envNameNearMiss(env, name)).toBe(
        ` (${env} sets ${name}, but a value there names \${${name}} before it is set: on ${name}'s own line or a line above it — a value may use only the environment's variables and those of the lines above it; write the value out)`,
      );
  });

  it("a name of svc's .env in other case or one or two letters off; nothing for a name far from every one", () => {
    home = tempHome();
    project = tempHome();
    process.chdir(project.dir);
    const env = home.write(".env", "export Github_Webhook_Secret=abc\nOPENAI_APIKEY='x'\n");
    expect(envNameNearMiss(env, "GITHUB_WEBHOOK_SECRET")).toContain(
      `(${env} sets Github_Webhook_Secret — did you mean that name?`,
    );
    expect(envNameNearMiss(env, "OPENAI_API_KEY")).toContain("sets OPENAI_APIKEY —");
    expect(envNameNearMiss(env, "SLACK_BOT_TOKEN")).toBe("");
    expect(envNameNearMiss(join(home.dir, "missing.env"), "SLACK_BOT_TOKEN")).toBe("");
  });
});
