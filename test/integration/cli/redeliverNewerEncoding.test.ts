import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc webhook redeliver of a payload a newer svc kept in an encoding this one does not know", () => {
  it("is refused (exit 2) naming the encoding, instead of sending its text as the payload", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            routes: { alpha: { secret: "newer-encoding-secret" } },
          },
        },
      }),
    );
    home.write(
      "deliveries/history.jsonl",
      `${JSON.stringify({ kind: "request", id: "from-newer-1", at: new Date().toISOString(), route: "alpha", status: 202, outcome: "accepted", content_type: "application/json", payload_encoding: "zstd", payload: "KLUv/QBYSQAAeyJuIjoxfQ==" })}\n`,
      0o600,
    );
    const result = await svc(home, ["webhook", "redeliver", "from-newer-1", "--port", "9"]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toContain(
      'delivery from-newer-1: its payload is kept in an encoding this version of svc cannot read ("zstd": written by a newer version), so it cannot be redelivered — redeliver it with that version',
    );
  });
});
