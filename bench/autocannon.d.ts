/** autocannon ships no types; the bench uses this much of it. */
declare module "autocannon" {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
  }
  export interface Result {
    requests: Histogram;
    latency: Histogram;
    statusCodeStats?: Record<string, { count: number }>;
    "2xx": number;
    non2xx: number;
  }
  function autocannon(options: Record<string, unknown>): Promise<Result>;
  export default autocannon;
}
