import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, type SvcResult, svc } from "./svc.js";

/** Creates cron job `name` (every hour) in `home` through the CLI. */
export function createCronJob(home: TempHome, name: string): Promise<SvcResult> {
  return svc(home, ["cron", "create", "--name", name, "--schedule", "every 1h", "--prompt", "x"]);
}

/**
 * A home whose config.yaml routes `st` and `other` fire the cron jobs `nightly` and `weekly` (`cron_job`),
 * with `nightly` created and the subscription `dyn` firing it too; `weekly` is left for the test to create.
 */
export async function homeFiringNightly(): Promise<TempHome> {
  const home = tempHome();
  home.write(
    "config.yaml",
    stringify(
      cliConfig({ st: { secret: "s", cron_job: "nightly" }, other: { secret: "s", cron_job: "weekly" } }),
    ),
  );
  const created = await createCronJob(home, "nightly");
  if (created.code !== 0) throw new Error(`svc cron create nightly failed: ${created.stderr}`);
  const subscribed = await svc(home, ["webhook", "subscribe", "dyn", "--cron-job", "nightly"]);
  if (subscribed.code !== 0) throw new Error(`svc webhook subscribe dyn failed: ${subscribed.stderr}`);
  return home;
}
