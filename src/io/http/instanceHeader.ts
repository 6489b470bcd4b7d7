/**
 * The header a gateway's `/health` 200 names it by: the instance id it made at its start and recorded in
 * `gateway.json` (`instance`). Not a secret: it tells this gateway's answer from another listener's at the
 * same address (a gone gateway's port taken by another program, or by another SVC_HOME's gateway).
 */
export const INSTANCE_HEADER = "Svc-Instance";
