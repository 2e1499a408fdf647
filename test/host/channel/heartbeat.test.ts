import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HeartbeatWatchdog, type HeartbeatHooks } from '../../../host/channel/heartbeat.ts';

function watchdog(overrides: Partial<HeartbeatHooks> = {}) {
  const calls = { pings: 0, dead: [] as number[] };
  const dog = new HeartbeatWatchdog(100, {
    connected: () => true,
    excused: () => false,
    ping: () => calls.pings++,
    dead: (silentTicks) => calls.dead.push(silentTicks),
    ...overrides,
  });
  return { dog, calls };
}

describe('HeartbeatWatchdog', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('pings every interval and declares the peer dead after two silent intervals', () => {
    const { dog, calls } = watchdog();
    dog.start();
    vi.advanceTimersByTime(100); // start() counts as heard: no silence yet
    expect(calls).toEqual({ pings: 1, dead: [] });
    vi.advanceTimersByTime(100);
    expect(calls).toEqual({ pings: 2, dead: [] });
    vi.advanceTimersByTime(100);
    expect(calls).toEqual({ pings: 2, dead: [2] });
    dog.stop();
  });

  it('any inbound frame resets the silence count', () => {
    const { dog, calls } = watchdog();
    dog.start();
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(100);
      dog.heard();
    }
    expect(calls).toEqual({ pings: 10, dead: [] });
    dog.stop();
  });

  it('silence while excused (paused socket, busy consumer) does not count', () => {
    let excused = true;
    const { dog, calls } = watchdog({ excused: () => excused });
    dog.start();
    vi.advanceTimersByTime(1_000);
    expect(calls).toEqual({ pings: 10, dead: [] });
    excused = false;
    vi.advanceTimersByTime(200);
    expect(calls.dead).toEqual([2]);
    dog.stop();
  });

  it('does nothing while there is no socket, and nothing after stop()', () => {
    let connected = false;
    const { dog, calls } = watchdog({ connected: () => connected });
    dog.start();
    vi.advanceTimersByTime(1_000);
    expect(calls).toEqual({ pings: 0, dead: [] });
    connected = true;
    dog.stop();
    vi.advanceTimersByTime(1_000);
    expect(calls).toEqual({ pings: 0, dead: [] });
  });
});
