import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DeliveryError } from "../../../src/io/targets/target.js";
import { createFakeGh, type FakeGh } from "../../fakes/fakeGh.js";
import { alive } from "../../helpers/process.js";
import { message, recordedRetries, registryFor } from "./support.js";

let gh: FakeGh | undefined;
afterEach(() => gh?.cleanup());

const forge = (path: string) =>
  registryFor({ github_comment: { enabled: true } }, { ...process.env, PATH: path }).get("forge_comment");

describe("forge_comment through a fake gh on PATH", () => {
  it("runs gh pr comment with an argument array and the body on stdin", async () => {
    gh = createFakeGh();
    const body = 'Review: `rm -rf /` $(whoami) "quotes" ; && |\nsecond line';
    const receipt = await forge(gh.path)?.send(
      message(body, { repo: "octo-org/hello.world", pr_number: "42" }),
    );
    expect(gh.calls()).toEqual([
      { argv: ["pr", "comment", "42", "--repo", "octo-org/hello.world", "--body-file", "-"], stdin: body },
    ]);
    expect(receipt?.chatId).toBe("octo-org/hello.world#42");
  });

  it("comments on an issue: when gh finds no pull request of that number, gh issue comment posts it", async () => {
    gh = createFakeGh({
      prCommentStderr:
        "GraphQL: Could not resolve to a PullRequest with the number of 7. (repository.pullRequest)",
    });
    await forge(gh.path)?.send(message("triaged", { repo: "octo/repo", pr_number: "7" }));
    expect(gh.calls()).toEqual([
      { argv: ["pr", "comment", "7", "--repo", "octo/repo", "--body-file", "-"], stdin: "triaged" },
      { argv: ["issue", "comment", "7", "--repo", "octo/repo", "--body-file", "-"], stdin: "triaged" },
    ]);
  });

  it("takes a GitHub Enterprise Server repository as host/owner/name, which gh --repo reads", async () => {
    gh = createFakeGh();
    const receipt = await forge(gh.path)?.send(
      message("hi", { repo: "ghe.example.com/octo/repo", pr_number: "3" }),
    );
    expect(gh.calls().map((c) => c.argv)).toEqual([
      ["pr", "comment", "3", "--repo", "ghe.example.com/octo/repo", "--body-file", "-"],
    ]);
    expect(receipt?.chatId).toBe("ghe.example.com/octo/repo#3");
  });

  it("runs no gh for a host the event filled into repo (gh would send it GH_ENTERPRISE_TOKEN); a host the route writes is taken", async () => {
    gh = createFakeGh();
    const target = registryFor(
      { github_comment: { enabled: true } },
      { ...process.env, PATH: gh.path, GH_ENTERPRISE_TOKEN: "ghp_enterpriseTOKENforTHEhost0123" },
    ).get("forge_comment");
    const error = await target
      ?.send(
        message(
          "hi",
          { repo: "collector.example.net/o/r", pr_number: "1" },
          { written: { repo: "{repository.full_name}", pr_number: "{number}" } },
        ),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as Error).message).toBe(
      'forge_comment: route "alerts": deliver_extra.repo names the host "collector.example.net", which the event filled in — not run: gh would send it the GitHub Enterprise token; write the host in the route\'s repo itself (repo: "ghe.example.com/{repository.full_name}") or set GH_HOST',
    );
    expect(gh.calls()).toEqual([]);
    await target?.send(
      message(
        "hi",
        { repo: "ghe.example.com/octo/repo", pr_number: "2" },
        { written: { repo: "ghe.example.com/{repository.full_name}", pr_number: "{number}" } },
      ),
    );
    expect(gh.calls().map((c) => c.argv)).toEqual([
      ["pr", "comment", "2", "--repo", "ghe.example.com/octo/repo", "--body-file", "-"],
    ]);
  });

  it("runs no gh when the event's / turns the route's owner into a host (myorg/{repository.name} with evil/x); a host written with its domain, localhost:port, or all three parts written are taken", async () => {
    gh = createFakeGh();
    const target = registryFor(
      { github_comment: { enabled: true } },
      { ...process.env, PATH: gh.path, GH_ENTERPRISE_TOKEN: "ghp_enterpriseTOKENforTHEhost0123" },
    ).get("forge_comment");
    const send = (repo: string, written: string) =>
      target?.send(
        message("hi", { repo, pr_number: "1" }, { written: { repo: written, pr_number: "{number}" } }),
      );
    const error = await send("myorg/evil/x", "myorg/{repository.name}")?.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as Error).message).toBe(
      'forge_comment: route "alerts": deliver_extra.repo "myorg/evil/x" reads as host "myorg", owner "evil": the event filled in a / where the route writes owner/name — not run: gh would send that host the GitHub Enterprise token; a GitHub Enterprise host is written with its domain (repo: "ghe.example.com/{repository.full_name}"), or set GH_HOST',
    );
    expect(gh.calls()).toEqual([]);
    await send("ghe.example.com/octo/repo", "ghe.example.com/{repository.full_name}");
    await send("localhost:8443/octo/repo", "localhost:8443/{repository.full_name}");
    await send("ghe/octo/repo", "ghe/{repository.owner.login}/{repository.name}");
    expect(gh.calls().map((c) => c.argv[4])).toEqual([
      "ghe.example.com/octo/repo",
      "localhost:8443/octo/repo",
      "ghe/octo/repo",
    ]);
  });

  it("keeps a GH_ENTERPRISE_TOKEN that gh's error quotes out of the error", async () => {
    const token = "ghp_enterpriseSECRET0123456789abcdef";
    gh = createFakeGh({ exitCode: 1, stderr: `HTTP 401: Bad credentials (token ${token})` });
    const target = registryFor(
      { github_comment: { enabled: true } },
      { ...process.env, PATH: gh.path, GH_ENTERPRISE_TOKEN: token },
    ).get("forge_comment");
    const error = await target
      ?.send(message("hi", { repo: "ghe.example.com/a/b", pr_number: "1" }))
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/exited with 1: HTTP 401: Bad credentials/);
    expect((error as Error).message).not.toContain("enterpriseSECRET");
  });

  it("a GitHub rate limit (gh: secondary rate limit) is retried in agent mode after a minute, as GitHub asks", async () => {
    gh = createFakeGh({
      exitCode: 1,
      stderr:
        "HTTP 403: You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    });
    const { waits, runStep } = recordedRetries();
    const error = await forge(gh.path)
      ?.send(message("hi", { repo: "a/b", pr_number: "1" }), undefined, { runStep })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).transient).toBe(true);
    expect(waits).toEqual([60_000, 60_000, 60_000]);
    expect(gh.calls()).toHaveLength(4);
  });

  it.each([
    [
      "a DNS failure",
      "error connecting to api.github.com\ncheck your internet connection or https://githubstatus.com\n",
    ],
    [
      "a refused connection",
      'Post "https://api.github.com/graphql": dial tcp 140.82.112.6:443: connect: connection refused\n',
    ],
    [
      "a TLS handshake that timed out",
      'Post "https://api.github.com/graphql": net/http: TLS handshake timeout\n',
    ],
    ["GitHub's 502", "HTTP 502: Server Error (https://api.github.com/graphql)\n"],
    ["GitHub's 503 to GraphQL", 'non-200 OK status code: 503 Service Unavailable body: ""\n'],
  ])(
    "gh failing on %s is a transient failure, retried in agent mode with the usual backoff",
    async (_, stderr) => {
      gh = createFakeGh({ exitCode: 1, stderr });
      const { waits, runStep } = recordedRetries();
      const error = await forge(gh.path)
        ?.send(message("hi", { repo: "a/b", pr_number: "1" }), undefined, { runStep })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as DeliveryError).transient).toBe(true);
      expect(waits).toEqual([1000, 2000, 4000]);
      expect(gh.calls()).toHaveLength(4);
    },
  );

  it("gh refusing the comment (no access, unknown repository, locked) is final: not retried", async () => {
    for (const stderr of [
      "GraphQL: Could not resolve to a Repository with the name 'octo/nope'. (repository)",
      "GraphQL: Unable to create comment because issue is locked. (addComment)",
      "HTTP 403: Resource not accessible by integration (https://api.github.com/graphql)",
    ]) {
      gh = createFakeGh({ exitCode: 1, stderr });
      const { waits, runStep } = recordedRetries();
      const error = await forge(gh.path)
        ?.send(message("hi", { repo: "octo/nope", pr_number: "1" }), undefined, { runStep })
        .catch((e: unknown) => e);
      expect((error as DeliveryError).transient).toBe(false);
      expect(waits).toEqual([]);
      gh.cleanup();
    }
  });

  it("a command whose child holds its pipes past timeout_seconds: the delivery fails at the timeout, and the child is ended before it posts", async () => {
    gh = createFakeGh();
    const dir = gh.path.split(":")[0] as string;
    const pidFile = join(dir, "child.pid");
    // A wrapper that runs gh's work in a child of its own, not exec'd: the child would post after 60 s.
    const wrapper = join(dir, "gh-wrapper");
    writeFileSync(
      wrapper,
      `#!/bin/sh\nsh -c 'echo $$ > "${pidFile}"; sleep 60; echo posted > "${dir}/posted"' &\nwait\n`,
      { mode: 0o755 },
    );
    const target = registryFor(
      { github_comment: { enabled: true, command: wrapper, timeout_seconds: 1 } },
      { ...process.env, PATH: gh.path },
    ).get("forge_comment");
    await expect(target?.send(message("late", { repo: "octo/repo", pr_number: "3" }))).rejects.toThrow(
      /gave no answer within 1s/,
    );
    const child = Number(readFileSync(pidFile, "utf8"));
    await vi.waitFor(() => expect(alive(child)).toBe(false));
  }, 20_000);

  it("checks gh auth status at startup", async () => {
    gh = createFakeGh();
    await forge(gh.path)?.check?.();
    expect(gh.calls().map((c) => c.argv)).toEqual([["auth", "status"]]);
  });

  it("fails the delivery when gh exits non-zero (unauthenticated, no access, unknown repository)", async () => {
    gh = createFakeGh({
      exitCode: 1,
      stderr: "GraphQL: Could not resolve to a Repository with the name 'octo/nope'. (repository)",
    });
    const error = await forge(gh.path)
      ?.send(message("hi", { repo: "octo/nope", pr_number: "1" }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as Error).message).toMatch(/exited with 1: GraphQL: Could not resolve to a Repository/);
    await expect(forge(gh.path)?.check?.()).rejects.toThrow(/gh auth status exited with 1/);
  });

  it("quotes gh's error on one line, as every platform's (gh writes several: a line per account)", async () => {
    gh = createFakeGh({
      exitCode: 1,
      stderr:
        "github.com\n  X Failed to log in to github.com account octocat (default)\n  - Active account: true\n  - The token in GH_TOKEN is invalid.\n",
    });
    const expected =
      "exited with 1: github.com X Failed to log in to github.com account octocat (default) - Active account: true - The token in GH_TOKEN is invalid.";
    await expect(forge(gh.path)?.check?.()).rejects.toThrow(`gh auth status ${expected}`);
    const error = await forge(gh.path)
      ?.send(message("hi", { repo: "octo/repo", pr_number: "1" }))
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe(`forge_comment: gh pr comment ${expected}`);
  });

  it("a GH_TOKEN that gh's error quotes across the 500-character cut leaves no beginning in the error", async () => {
    const token = "ghp_0123456789abcdefSECRETsecret0123456789";
    gh = createFakeGh({ exitCode: 1, stderr: `${"x".repeat(480)} token ${token} refused` });
    const target = registryFor(
      { github_comment: { enabled: true } },
      { ...process.env, PATH: gh.path, GH_TOKEN: token },
    ).get("forge_comment");
    const error = await target?.send(message("hi", { repo: "a/b", pr_number: "1" })).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/exited with 1: x+ token \[red/);
    expect((error as Error).message).not.toContain("ghp_0123");
  });

  it("gh's error cut at 500 characters right inside an emoji leaves the emoji out whole", async () => {
    // 499 characters, then an emoji whose first half is the 500th.
    gh = createFakeGh({ exitCode: 1, stderr: `${"x".repeat(499)}🚀 after` });
    const error = await forge(gh.path)
      ?.send(message("hi", { repo: "a/b", pr_number: "1" }))
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe(`forge_comment: gh pr comment exited with 1: ${"x".repeat(499)}`);
  });

  it("fails with an install hint when gh is not on PATH", async () => {
    await expect(
      forge("/nonexistent-dir")?.send(message("hi", { repo: "a/b", pr_number: "1" })),
    ).rejects.toThrow(/"gh" was not found on PATH — install the GitHub CLI/);
  });

  it("a command that cannot be started (not executable, a directory, no such path) says why, not 'exited with a signal'", async () => {
    gh = createFakeGh();
    const notExecutable = join(gh.dir, "gh-copy");
    writeFileSync(notExecutable, "#!/bin/sh\nexit 0\n", { mode: 0o644 });
    const send = (command: string) =>
      registryFor({ github_comment: { enabled: true, command } })
        .get("forge_comment")
        ?.send(message("hi", { repo: "a/b", pr_number: "1" }));
    const fix = "set platforms.forge_comment.command to the gh executable";
    await expect(send(notExecutable)).rejects.toThrow(
      `forge_comment: "${notExecutable}" is not executable (chmod +x ${notExecutable}) — ${fix}`,
    );
    await expect(send(gh.dir)).rejects.toThrow(`forge_comment: "${gh.dir}" is not a file — ${fix}`);
    const missing = join(gh.dir, "no-such-gh-binary");
    await expect(send(missing)).rejects.toThrow(`forge_comment: "${missing}" does not exist — ${fix}`);
  });

  it.each([
    [{ repo: "a/b; rm -rf /", pr_number: "1" }, /repo must be owner\/name/],
    [{ repo: "../etc", pr_number: "1" }, /repo must be owner\/name/],
    [{ repo: "a/..", pr_number: "1" }, /repo must be owner\/name/],
    [{ repo: "ghe.example.com/../b", pr_number: "1" }, /repo must be owner\/name/],
    [{ repo: "-h/a/b", pr_number: "1" }, /repo must be owner\/name/],
    [{ repo: "h/a/b/c", pr_number: "1" }, /repo must be owner\/name/],
    [{ pr_number: "1" }, /repo must be owner\/name/],
    [{ repo: "a/b", pr_number: "0" }, /pr_number must be a positive integer/],
    [{ repo: "a/b", pr_number: "--help" }, /pr_number must be a positive integer/],
    [{ repo: "a/b" }, /pr_number must be a positive integer/],
    // A template the event did not fill (an issue_comment event has no pull_request.number) says so.
    [
      { repo: "a/b", pr_number: "{pull_request.number}" },
      /pr_number must be a positive integer, got "\{pull_request\.number\}" \(a template the event did not fill: it has no such field\)$/,
    ],
    [
      { repo: "{repository.full_name}", pr_number: "7" },
      /repo must be owner\/name .*, got "\{repository\.full_name\}" \(a template the event did not fill: it has no such field\)$/,
    ],
    [{ repo: "a/b", pr_number: "#{number}" }, /pr_number must be a positive integer, got "#\{number\}"$/],
    // A number too long for a pull request's is named as such, not as "not a positive integer" alone.
    [
      { repo: "a/b", pr_number: "12345678901" },
      /pr_number must be a positive integer, got "12345678901" \(more than 10 digits: longer than any pull request number\)$/,
    ],
    // A field the event holds as a JSON null renders `null`: the event has the field, without a value.
    [
      { repo: "a/b", pr_number: "null" },
      /pr_number must be a positive integer, got "null" \(the event's field is null\)$/,
    ],
    // A template the event filled with a mapping (`{pull_request}` for `{pull_request.number}`) was filled:
    // it was said to name a field the event does not have.
    [
      { repo: "a/b", pr_number: '{"number":7}' },
      /pr_number must be a positive integer, got "\{"number":7\}"$/,
    ],
    // Payload text quoted cut (100 and 30 characters): a cut inside an emoji leaves it out whole.
    [{ repo: `${"x".repeat(99)}😀/b`, pr_number: "1" }, /repo must be owner\/name .*, got "x{99}"$/],
    [{ repo: "a/b", pr_number: `${"1".repeat(29)}😀` }, /pr_number must be a positive integer, got "1{29}"$/],
  ])("rejects deliver_extra %j without running gh", async (extra, pattern) => {
    gh = createFakeGh();
    await expect(forge(gh.path)?.send(message("hi", extra as Record<string, string>))).rejects.toThrow(
      pattern,
    );
    expect(gh.calls()).toEqual([]);
  });
});
