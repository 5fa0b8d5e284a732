/** Source of the current time. Every rule and query takes its `now` from a clock, never from `Date.now()` directly. */
export interface Clock {
  now(): Date;
}

/**
 * Real time. Two clocks run in a process (docs/decisions.md, "Real time and the test clock"):
 * `Deps.clock` moves test-mode schedules and may be a test clock; `Deps.realClock` is always
 * real time and dates what a receiver or the law checks against the wall clock: webhook
 * signatures, delivery timestamps and their schedule, and live facts (an agreement signed, an
 * account gone live).
 */
export const realClock: Clock = { now: () => new Date() };

/** The system's clock: real time (the name the kernel used before there were two). */
export const systemClock: Clock = realClock;

/**
 * A clock that tests move by hand, as Stripe's test clocks do. It starts at the real time and
 * then only moves when told; real time passing does not move it.
 */
export class TestClock implements Clock {
  constructor(private offsetMs = 0) {}

  /** How far ahead of real time this clock is, ms (shared with other processes through the database). */
  get offset(): number {
    return this.offsetMs;
  }

  /** Adopts another process's (later) position. */
  catchUp(offsetMs: number): void {
    if (offsetMs > this.offsetMs) this.offsetMs = offsetMs;
  }

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  /** Moves time forward by `ms` (never backwards: ledgers and windows assume monotonic time). */
  advance(ms: number): Date {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('a test clock only moves forward');
    this.offsetMs += ms;
    return this.now();
  }
  /** Moves time to `at` if it is not in the clock's past. */
  setTo(at: Date): Date {
    return this.advance(Math.max(0, at.getTime() - this.now().getTime()));
  }
}
