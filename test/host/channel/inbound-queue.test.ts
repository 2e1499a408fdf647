import { describe, expect, it } from 'vitest';
import { InboundQueue } from '../../../host/channel/inbound-queue.ts';

describe('InboundQueue', () => {
  it('reports full at the frame limit, keeps arrival order, and is low-water again at half', () => {
    const queue = new InboundQueue(4, 1_000_000);
    expect([1, 2, 3].map((n) => queue.push(`f${n}`, 10)), 'below 4 frames it is not full').toEqual([false, false, false]);
    expect(queue.push('f4', 10), 'the 4th frame fills it').toBe(true);
    expect(queue.lowWater, '4 of 4 frames is above half').toBe(false);
    expect(queue.shift()?.text).toBe('f1');
    expect(queue.lowWater, '3 of 4 frames is above half').toBe(false);
    expect(queue.shift()?.text).toBe('f2');
    expect(queue.lowWater, '2 of 4 frames is half').toBe(true);
    expect([queue.length, queue.bytes]).toEqual([2, 20]);
  });

  it('reports full at the byte limit whatever the frame count, and counts bytes back down on shift', () => {
    const queue = new InboundQueue(64, 100);
    expect(queue.push('a', 60)).toBe(false);
    expect(queue.push('b', 40), '60 + 40 bytes reaches the 100-byte limit').toBe(true);
    expect(queue.lowWater).toBe(false);
    queue.shift();
    expect(queue.bytes).toBe(40);
    expect(queue.lowWater, '40 of 100 bytes is under half').toBe(true);
  });

  it('clear() drops every frame and its bytes', () => {
    const queue = new InboundQueue(2, 10);
    queue.push('x', 8);
    queue.push('y', 8);
    queue.clear();
    expect([queue.length, queue.bytes, queue.shift()]).toEqual([0, 0, undefined]);
  });
});
