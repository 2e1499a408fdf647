// Reconnect pacing for the channel: capped exponential backoff with jitter,
// inside a deadline counted from the first failure of a spell. Pure apart from
// the injected clock and random source; the channel owns the timers.

export type BackoffOptions = {
  initialMs: number;
  maxMs: number;
  /** Give up once this much time has passed since the spell's first failure. */
  deadlineMs: number;
  now?: () => number;
  /** [0, 1); injectable so tests are deterministic. */
  random?: () => number;
};

export type BackoffStep =
  | { giveUp: false; attempt: number; delayMs: number; elapsedMs: number }
  | { giveUp: true; attempt: number; elapsedMs: number };

export class ReconnectBudget {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly deadlineMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private spellStartedAt: number | null = null;
  private attempts = 0;

  constructor(options: BackoffOptions) {
    this.initialMs = options.initialMs;
    this.maxMs = options.maxMs;
    this.deadlineMs = options.deadlineMs;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  /** True while a failure spell is open (between the first failure and the next success). */
  get failing(): boolean {
    return this.spellStartedAt !== null;
  }

  /** Milliseconds since the spell's first failure (0 when not failing). */
  get elapsedMs(): number {
    return this.spellStartedAt === null ? 0 : this.now() - this.spellStartedAt;
  }

  /**
   * Record a failure and say how long to wait before the next attempt, or to
   * give up. Equal jitter (half fixed, half random) keeps delays from
   * collapsing to zero while still spreading hosts apart. The last delay is
   * clipped so one final attempt lands right at the deadline.
   */
  failure(): BackoffStep {
    const now = this.now();
    if (this.spellStartedAt === null) this.spellStartedAt = now;
    const elapsedMs = now - this.spellStartedAt;
    const attempt = ++this.attempts;
    const remaining = this.deadlineMs - elapsedMs;
    if (remaining <= 0) return { giveUp: true, attempt, elapsedMs };
    const exp = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(attempt - 1, 30));
    const delayMs = Math.min(remaining, Math.round(exp / 2 + this.random() * (exp / 2)));
    return { giveUp: false, attempt, delayMs, elapsedMs };
  }

  /** An attach succeeded: close the spell; the next failure starts a fresh deadline. */
  success(): void {
    this.spellStartedAt = null;
    this.attempts = 0;
  }
}

/** "31.2 s" — for give-up messages. */
export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
