// Liveness of the attached bridge: a ping every interval, and the verdict
// "dead" after two intervals in which nothing arrived. Owns the interval timer
// and the silence count; the channel owns the socket, sends the ping and
// decides what a dead peer costs (a reconnect).

/** Silent intervals (two unanswered pings) after which the peer counts as dead. */
const maxSilentTicks = 2;

export type HeartbeatHooks = {
  /** False when there is no socket to watch: the tick does nothing. */
  connected(): boolean;
  /** True while silence is our own doing (a paused socket, a busy consumer), not a dead peer. */
  excused(): boolean;
  ping(): void;
  /** The peer missed `silentTicks` intervals; the watchdog keeps running until stop(). */
  dead(silentTicks: number): void;
};

export class HeartbeatWatchdog {
  private timer: NodeJS.Timeout | null = null;
  private heardSinceTick = false;
  private silentTicks = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly hooks: HeartbeatHooks,
  ) {}

  /** Start ticking; the peer counts as just heard from. */
  start(): void {
    this.heardSinceTick = true;
    this.silentTicks = 0;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Any inbound frame proves the peer alive. */
  heard(): void {
    this.heardSinceTick = true;
  }

  private tick(): void {
    if (!this.hooks.connected()) return;
    if (this.heardSinceTick || this.hooks.excused()) this.silentTicks = 0;
    else this.silentTicks++;
    this.heardSinceTick = false;
    if (this.silentTicks >= maxSilentTicks) {
      this.hooks.dead(this.silentTicks);
      return;
    }
    this.hooks.ping();
  }
}
