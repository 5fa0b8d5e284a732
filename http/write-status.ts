/**
 * The status of a write route's answer. The domain's reply says only what the write did
 * (`created`); the route declares once, in its config (`writeStatus`), which status each answer
 * takes, and both its first answer and every replay of its Idempotency-Key go through here.
 */
export interface WriteStatus {
  /** The status when the write made a new resource. */
  created: number;
  /** The status when it found one that already existed, or changed one. */
  otherwise: number;
}

/** 201 for a new resource; 200 for the existing one a duplicate rule found (an open call request, a listed number). */
export const CREATED_OR_EXISTING: WriteStatus = { created: 201, otherwise: 200 };
/** 200: the resource was changed in place. */
export const UPDATED: WriteStatus = { created: 200, otherwise: 200 };
/** 202: the request is recorded and the work goes on after the answer. */
export const ACCEPTED: WriteStatus = { created: 202, otherwise: 202 };

export function writeStatusOf(status: WriteStatus, created: boolean): number {
  return created ? status.created : status.otherwise;
}
