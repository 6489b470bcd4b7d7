import { describe, expect, it } from "vitest";
import { collectEnv } from "../../../src/cli/mcp/envOption.js";

const message = (value: string): string => {
  try {
    collectEnv(value);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`--env ${value} was taken`);
};

describe("svc mcp add --env KEY=value: a malformed one is refused without its value", () => {
  it("a name and its value joined otherwise (a space, docker's or compose's colon) names the name alone", () => {
    for (const value of ["GITHUB_TOKEN ghp_s3cr3tValue42", "GITHUB_TOKEN:ghp_s3cr3tValue42"]) {
      const text = message(value);
      expect(text).toBe(
        "--env: expected KEY=value, got text with no = (not shown: it may be a credential) — write GITHUB_TOKEN=<value>",
      );
    }
  });

  it("a value with no name before its =, or a bare word that is no variable name (the credential alone), is not shown", () => {
    expect(message("=ghp_s3cr3tValue42")).toBe(
      "--env: expected KEY=value, got no name before the = (not shown: it may be a credential)",
    );
    expect(message("ghp_s3cr3tValue42")).toBe(
      "--env: expected KEY=value, got text with no = (not shown: it may be a credential)",
    );
  });

  it("a variable's name alone, its value forgotten (docker's -e NAME), is named with the variable to write", () => {
    expect(message("NOEQUALS")).toBe(
      `--env: expected KEY=value, got "NOEQUALS" — a server gets no variable of svc's environment or .env by its name alone (as docker's -e NOEQUALS passes the shell's): write --env NOEQUALS='\${NOEQUALS}', so svc reads NOEQUALS from .env (or its own environment) at each connect; nothing was written`,
    );
  });

  it("an empty value (a variable the shell expanded to nothing) is refused with the variable to write in single quotes", () => {
    expect(message("API_KEY=")).toBe(
      `--env API_KEY=: the value is empty, so the server would get API_KEY set to nothing — the shell likely expanded a \${VAR} to nothing (set in .env, not in the shell): write it in single quotes, --env API_KEY='\${API_KEY}', so svc reads API_KEY from .env (or its own environment) at each connect; an empty value meant so is written in config.yaml (env: {API_KEY: ""}); nothing was written`,
    );
    // A name in capitals with digits is a variable's name too: quoted.
    expect(message("S3_TOKEN=")).toContain("--env S3_TOKEN=: the value is empty");
    // A value of spaces or a ${VAR} is taken as given.
    expect(collectEnv("PAD= ")).toEqual({ PAD: " " });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(collectEnv("API_KEY=${API_KEY}")).toEqual({ API_KEY: "${API_KEY}" });
  });

  it("an empty value after text that is no variable name in capitals (a credential ending in base64 padding) does not show the text", () => {
    const credential = "c2VjcmV0LXRva2VuLXZhbHVlMQ";
    for (const value of [`${credential}=`, "api-key="]) {
      const text = message(value);
      expect(text).toBe(
        `--env: the value after = is empty and the text before it is no variable name (not shown: it may be a credential) — write --env KEY='\${KEY}', so svc reads KEY from .env (or its own environment) at each connect, KEY being the variable's name; nothing was written`,
      );
      expect(text).not.toContain(value.slice(0, -1));
    }
  });

  it("a credential given without its NAME= that holds an = of its own (base64 padding, a=b inside) is refused, neither part shown", () => {
    const refusal = (why: string) =>
      `--env: ${why} (not shown: it may be a credential) — write --env NAME=value, NAME being the variable's name (or --env NAME='\${NAME}', so svc reads NAME from .env (or its own environment) at each connect); nothing was written`;
    const notAName = refusal(
      "the text before the first = is not an environment variable name (letters, digits and _, not starting with a digit)",
    );
    for (const [value, parts] of [
      ["c2Vj+cmV0/LXRva2Vu==", ["c2Vj+cmV0/LXRva2Vu", "="]],
      ["sk-proj-Ab12=Cd34", ["sk-proj-Ab12", "Cd34"]],
      ["eyJhbGciOi.eyJzdWIi=x.sig", ["eyJhbGciOi.eyJzdWIi", "x.sig"]],
      ["9lives=Pw7q", ["9lives", "Pw7q"]],
    ] as const) {
      const text = message(value);
      expect(text).toBe(notAName);
      for (const part of parts.filter((p) => p.length > 1)) expect(text).not.toContain(part);
    }
    // Text that is a name, followed by padding alone: what a credential of letters and digits leaves.
    const padded = message("c2VjcmV0LXRva2VuLXZhbHVlMQ==");
    expect(padded).toBe(
      refusal(
        "the value after the first = is nothing but =, as a credential ending in base64 padding given alone leaves it",
      ),
    );
    expect(padded).not.toContain("c2VjcmV0LXRva2VuLXZhbHVlMQ");
    // Names of either case, and values holding = or ending in padding, are taken as given.
    expect(collectEnv("http_proxy=http://p:3128")).toEqual({ http_proxy: "http://p:3128" });
    expect(collectEnv("_X1=a=b")).toEqual({ _X1: "a=b" });
    expect(collectEnv("API_KEY=c2VjcmV0==")).toEqual({ API_KEY: "c2VjcmV0==" });
  });
});
