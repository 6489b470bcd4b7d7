// The suite's client command in test/conformance/mcpClient.test.ts: hands the scenario (the server URL the
// suite appends, MCP_CONFORMANCE_SCENARIO and MCP_CONFORMANCE_CONTEXT) to the svcClient.mjs the test serves
// at SVC_CONFORMANCE_DRIVER, prints what its commands print and exits with its exit code. It loads nothing
// else, so a scenario costs a bare node start here rather than a start of svc's CLI.
import { connect } from "node:net";

const request = {
  serverUrl: process.argv[process.argv.length - 1],
  scenario: process.env.MCP_CONFORMANCE_SCENARIO ?? "",
  context: JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}"),
};
const socket = connect(process.env.SVC_CONFORMANCE_DRIVER ?? "");
socket.setEncoding("utf8");
let buffered = "";
let exit;
socket.on("connect", () => socket.write(`${JSON.stringify(request)}\n`));
socket.on("data", (chunk) => {
  buffered += chunk;
  const lines = buffered.split("\n");
  buffered = lines.pop() ?? "";
  for (const line of lines) {
    const message = JSON.parse(line);
    if (message.out !== undefined) process.stdout.write(message.out);
    if (message.exit !== undefined) exit = message.exit;
  }
});
socket.on("error", (e) => process.stderr.write(`forwardClient: ${e.message}\n`));
// No exit code from the driver (it died, or the socket failed): the scenario's client failed.
socket.on("close", () => {
  process.exitCode = exit ?? 1;
});
