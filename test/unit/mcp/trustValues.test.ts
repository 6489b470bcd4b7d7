import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { text, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

const transportFor = inMemoryServers(
  Object.fromEntries(["b", "n", "m", "f", "u", "x", "e", "v"].map((name) => [name, () => buildServer()])),
);

/** `trust` is `full` or `untrusted`; unrecognized values are treated as untrusted — any YAML value. */
describe("trust values from config.yaml (SDK server over InMemoryTransport)", () => {
  it("a boolean, a number or a mapping is an unrecognized value: the server runs untrusted, the gateway still starts", async () => {
    const server = (trust: string) => `    command: ${IN_MEMORY_ENTRY.command}\n    trust: ${trust}\n`;
    ctx.home.write(
      "config.yaml",
      `mcp_servers:\n  b:\n${server("true")}  n:\n${server("1")}  m:\n${server("{level: full}")}  f:\n${server("full")}`,
    );
    const { config } = loadConfig({ home: ctx.home.dir, env: {} });
    const h = ctx.hub(ctx.home, config.mcp_servers, { transportFor });
    for (const name of ["b", "n", "m"]) {
      await expect(h.call(name, "add", { a: 1, b: 2 })).rejects.toMatchObject({ code: "approval_denied" });
      expect(text(await h.call(name, "echo", { text: "ro" }))).toBe("ro");
    }
    expect(text(await h.call("f", "add", { a: 1, b: 2 }))).toBe("3");
  });

  it("a denied call quotes a value with spaces around it as the start's warning does, so its spaces show", async () => {
    ctx.home.write(
      "config.yaml",
      `mcp_servers:\n  u:\n    command: ${IN_MEMORY_ENTRY.command}\n    trust: " full "\n  x:\n    command: ${IN_MEMORY_ENTRY.command}\n    trust: Full\n`,
    );
    const { config } = loadConfig({ home: ctx.home.dir, env: {} });
    const h = ctx.hub(ctx.home, config.mcp_servers, { transportFor });
    await expect(h.call("u", "add", { a: 1, b: 2 })).rejects.toThrow(
      'mcp_servers.u: calling "add" needs approval (trust: " full ") and it was denied',
    );
    await expect(h.call("x", "add", { a: 1, b: 2 })).rejects.toThrow(
      'mcp_servers.x: calling "add" needs approval (trust: "Full") and it was denied',
    );
  });

  it("a ${VAR} with spaces around it is quoted as any other value not exactly full, untrusted or one ${VAR}", async () => {
    ctx.home.write(".env", "T=untrusted\n");
    ctx.home.write(
      "config.yaml",
      `mcp_servers:\n  v:\n    command: ${IN_MEMORY_ENTRY.command}\n    trust: " $\{T} "\n`,
    );
    const { config } = loadConfig({ home: ctx.home.dir, env: {} });
    const h = ctx.hub(ctx.home, config.mcp_servers, { transportFor });
    await expect(h.call("v", "add", { a: 1, b: 2 })).rejects.toThrow(
      `mcp_servers.v: calling "add" needs approval (trust: " $\{T} ") and it was denied`,
    );
  });

  it("a variable in trust is rendered at call time from the profile's .env", async () => {
    ctx.home.write(".env", "FX_TRUST=full\nRO_TRUST=untrusted\nEMPTY_TRUST=\n");
    // `${NAME}` as config.yaml writes it.
    const variable = (name: string) => `$\{${name}}`;
    const server = (trust: string) =>
      `    command: ${IN_MEMORY_ENTRY.command}\n    trust: "${variable(trust)}"\n`;
    ctx.home.write(
      "config.yaml",
      `mcp_servers:\n  f:\n${server("FX_TRUST")}  u:\n${server("env:RO_TRUST")}  x:\n${server("NOT_SET")}  e:\n${server("EMPTY_TRUST")}`,
    );
    const { config } = loadConfig({ home: ctx.home.dir, env: {} });
    const h = ctx.hub(ctx.home, config.mcp_servers, { transportFor });
    expect(text(await h.call("f", "add", { a: 1, b: 2 }))).toBe("3");
    await expect(h.call("u", "add", { a: 1, b: 2 })).rejects.toThrow(
      `mcp_servers.u: calling "add" needs approval (trust: ${variable("env:RO_TRUST")}) and it was denied`,
    );
    await expect(h.call("x", "add", { a: 1, b: 2 })).rejects.toMatchObject({ code: "approval_denied" });
    // The value as written does not show that nothing set it.
    await expect(h.call("x", "add", { a: 1, b: 2 })).rejects.toThrow(
      `mcp_servers.x: calling "add" needs approval (trust: ${variable("NOT_SET")}, where ${variable("NOT_SET")} is not set, so the server is treated as untrusted — add NOT_SET=full or NOT_SET=untrusted to the profile's .env or the environment) and it was denied`,
    );
    // Set to an empty value: no trust either, said as such.
    await expect(h.call("e", "add", { a: 1, b: 2 })).rejects.toThrow(
      `mcp_servers.e: calling "add" needs approval (trust: ${variable("EMPTY_TRUST")}, where ${variable("EMPTY_TRUST")} is set to an empty value, so the server is treated as untrusted — set EMPTY_TRUST=full or EMPTY_TRUST=untrusted in the profile's .env or the environment) and it was denied`,
    );
  });
});
