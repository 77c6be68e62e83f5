/** Proof of holding a run: every write under a lease checks the token, so a stale holder changes nothing. */
export interface Lease {
  runId: number;
  jobId: string;
  generation: number;
  token: string;
  owner: string;
  until: number;
}
