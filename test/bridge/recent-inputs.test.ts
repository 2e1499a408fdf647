// RecentInputs: what a keeper and an adopting bridge keep of a kept CLI's stdin writes, bounded the
// same way on both sides (KEEPER_LIMITS), so their counts and latest writes compare.
import { describe, expect, it } from 'vitest';
import { KEEPER_LIMITS } from '../../bridge/limits.ts';
import { RecentInputs } from '../../bridge/survive/recent-inputs.ts';

describe('RecentInputs', () => {
  it('counts every write and keeps the latest recentInputs of them, oldest first', () => {
    const inputs = new RecentInputs();
    const total = KEEPER_LIMITS.recentInputs + 10;
    for (let i = 0; i < total; i++) inputs.took(`w${i}`);
    expect(inputs.count).toBe(total);
    expect(inputs.recent).toHaveLength(KEEPER_LIMITS.recentInputs);
    expect(inputs.recent[0]).toBe('w10');
    expect(inputs.recent.at(-1)).toBe(`w${total - 1}`);
  });

  it('keeps at most recentInputChars characters, and the newest write whatever its size', () => {
    const inputs = new RecentInputs();
    const half = 'a'.repeat(KEEPER_LIMITS.recentInputChars / 2);
    inputs.took('small');
    inputs.took(half);
    inputs.took(half);
    expect(inputs.recent).toEqual([half, half]); // 'small' went: the three are past the bound
    const huge = 'b'.repeat(KEEPER_LIMITS.recentInputChars * 2);
    inputs.took(huge);
    expect(inputs.recent).toEqual([huge]);
    expect(inputs.count).toBe(4);
  });
});
