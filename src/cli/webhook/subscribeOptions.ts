/** The options of `svc webhook subscribe <name>`, as commander parses them. */
export interface SubscribeOptions {
  /** Each `--events` as given (the option may be repeated). */
  events?: string[];
  prompt?: string;
  deliver?: string;
  deliverChatId?: string;
  deliverExtra?: Record<string, string>;
  deliverOnly?: boolean;
  /** false: `--no-cron-job` (back to an agent route). */
  cronJob?: string | false;
  description?: string;
  routeProfile?: string;
  secret?: string;
  /** `--secret-file <path>`: read into `secret` before anything else (secretOption.ts). */
  secretFile?: string;
  /** How the secret read into `secret` was given (`--secret-file <path>`, `--secret -`): see secretOption.ts. */
  secretGiven?: string;
  mirrorToSession?: boolean;
  /** Not an option (refused): toolsets are written into the record by hand. */
  toolsets?: string;
  /** Not options (refused): route properties a record holds that are written into it by hand. */
  skills?: string;
  filters?: string;
  script?: string;
  coalesce?: string;
  /** Not an option (refused): the binding is `--route-profile`. */
  profile?: string;
}
