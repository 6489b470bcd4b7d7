/** BullMQ refuses ids with `:` and all-digit ids; keys are `<route>:<delivery id>`. */
export function jobIdOf(key: string): string {
  return `j-${encodeURIComponent(key)}`;
}

/** The key a job id was derived from (`jobIdOf`). */
export function keyOfJobId(jobId: string): string {
  return decodeURIComponent(jobId.slice("j-".length));
}
