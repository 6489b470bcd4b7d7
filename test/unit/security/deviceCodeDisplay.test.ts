import { expect, it } from "vitest";
import type { OAuthJob } from "../../../src/actors/oauth/context.js";
import { printDeviceCode } from "../../../src/actors/oauth/deviceLogin.js";

it("the device login prints the authorization server's URL and code with no control character raw", () => {
  const printed: string[] = [];
  const job = { serverName: "gh", print: (line: string) => printed.push(line) } as unknown as OAuthJob;
  const device = {
    // Erase the line, move up, then print a URL of the attacker's choosing.
    userCode: "WDJB\u001b[2K\u001b[1A\rOpen https://evil.example",
    verificationUri: "https://as.example/activate\u009b2J",
    verificationUriComplete: "https://as.example/activate?c=1\nnext",
  };
  printDeviceCode(job, device as unknown as Parameters<typeof printDeviceCode>[1]);
  expect(printed).toEqual([
    "To log in to gh, open https://as.example/activate\\u009b2J and enter the code: WDJB\\u001b[2K\\u001b[1A\\u000dOpen https://evil.example",
    "Or open this link directly: https://as.example/activate?c=1\\nnext",
  ]);
});
