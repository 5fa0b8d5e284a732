// autocannon ships no types; only what bench/lib.ts uses.
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    /** Requests only: how many were answered in the run. */
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
  }
  function autocannon(opts: { url: string; duration: number; connections: number; pipelining: number; headers?: Record<string, string>; overallRate?: number }): Promise<Result>;
  export default autocannon;
}
