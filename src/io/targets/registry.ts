import type { Config } from "../../config/schema.js";
import {
  PLATFORM_NAMES,
  PLATFORM_SCHEMAS,
  type PlatformConfig,
  type PlatformName,
} from "../../config/sections/platforms.js";
import { bluebubblesTarget } from "./bluebubbles.js";
import { dingtalkTarget } from "./dingtalk.js";
import { discordTarget } from "./discord.js";
import { emailTarget } from "./email.js";
import { feishuTarget } from "./feishu.js";
import { forgeCommentTarget } from "./forgeComment.js";
import { homeAutomationTarget } from "./homeAutomation.js";
import { logTarget } from "./log.js";
import { matrixTarget } from "./matrix.js";
import { mattermostTarget } from "./mattermost.js";
import { canonicalTarget } from "./names.js";
import { qqbotTarget } from "./qqbot.js";
import { signalTarget } from "./signal.js";
import { slackTarget } from "./slack.js";
import { smsTarget } from "./sms.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";
import { telegramTarget } from "./telegram.js";
import { wecomTarget } from "./wecom.js";
import { weixinTarget } from "./weixin.js";
import { whatsappTarget } from "./whatsapp.js";

export type TargetState = "connected" | "failed" | "unchecked";

export interface TargetRegistry {
  get(name: string): DeliveryTarget | undefined;
  /** Canonical names of the targets that are enabled and usable. */
  enabled(): readonly string[];
  /** Every enabled target (for the startup checks). */
  all(): readonly DeliveryTarget[];
  /** The outcome of the last credentials check (`checkTargets`). */
  state(name: string): TargetState | undefined;
  setState(name: string, state: TargetState): void;
}

type Builders = { [N in PlatformName]: (settings: PlatformConfig<N>, deps: TargetDeps) => DeliveryTarget };

const BUILDERS: Builders = {
  telegram: telegramTarget,
  discord: discordTarget,
  slack: slackTarget,
  signal: signalTarget,
  whatsapp: whatsappTarget,
  matrix: matrixTarget,
  mattermost: mattermostTarget,
  dingtalk: dingtalkTarget,
  feishu: feishuTarget,
  wecom: wecomTarget,
  weixin: weixinTarget,
  bluebubbles: bluebubblesTarget,
  qqbot: qqbotTarget,
  sms: smsTarget,
  email: emailTarget,
  home_automation: homeAutomationTarget,
  forge_comment: forgeCommentTarget,
};

function build<N extends PlatformName>(
  name: N,
  settings: PlatformConfig<N>,
  deps: TargetDeps,
): DeliveryTarget {
  return (BUILDERS[name] as (s: PlatformConfig<N>, d: TargetDeps) => DeliveryTarget)(settings, deps);
}

/**
 * Builds the targets the configuration enables (`log` always). forge_comment needs no keys (the
 * `gh` client on PATH), so with no `platforms.forge_comment` section, or one that does not set `enabled`,
 * it is built on first use, without a startup check; `enabled: false` turns it off.
 */
export function createTargets(config: Config, deps: TargetDeps): TargetRegistry {
  const targets = new Map<string, DeliveryTarget>([["log", logTarget(deps)]]);
  const states = new Map<string, TargetState>([["log", "connected"]]);
  const platforms = config.platforms as { [N in PlatformName]?: PlatformConfig<N> };
  for (const name of PLATFORM_NAMES) {
    const settings = platforms[name];
    if (settings?.enabled !== true) continue;
    targets.set(name, build(name, settings, deps));
    states.set(name, "unchecked");
  }
  let implicitForge: DeliveryTarget | undefined;
  const implicit = (canonical: string) => {
    if (canonical !== "forge_comment" || platforms.forge_comment?.enabled !== undefined) return undefined;
    implicitForge ??= build(
      "forge_comment",
      platforms.forge_comment ?? PLATFORM_SCHEMAS.forge_comment.parse({}),
      deps,
    );
    return implicitForge;
  };
  return {
    get: (name) => {
      const canonical = canonicalTarget(name);
      return canonical === undefined ? undefined : (targets.get(canonical) ?? implicit(canonical));
    },
    enabled: () => [...targets.keys()],
    all: () => [...targets.values()],
    state: (name) => states.get(canonicalTarget(name) ?? name),
    setState: (name, state) => {
      states.set(canonicalTarget(name) ?? name, state);
    },
  };
}
