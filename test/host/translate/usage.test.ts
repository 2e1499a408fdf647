// host/adapter-kit/usage: token counts (input split from cache reads/writes) → LanguageModelV4Usage,
// and per-key sums over a turn's steps.
import { describe, expect, it } from 'vitest';
import { addCounts, usageFromCounts } from '../../../host/adapter-kit/usage.ts';

describe('usageFromCounts', () => {
  it('input total is noCache + cache reads + cache writes; raw is kept', () => {
    expect(usageFromCounts({ noCache: 10, cacheRead: 3, cacheWrite: 2, output: 5 }, { input: 10 })).toEqual({
      inputTokens: { total: 15, noCache: 10, cacheRead: 3, cacheWrite: 2 },
      outputTokens: { total: 5, text: undefined, reasoning: undefined },
      raw: { input: 10 },
    });
  });

  it('nothing reported → every count undefined, no raw', () => {
    expect(usageFromCounts(undefined)).toEqual({
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    });
    expect(usageFromCounts({ cacheRead: 4 }).inputTokens.total, 'a partial report still totals what it has').toBe(4);
  });
});

describe('addCounts', () => {
  it('sums per key; a key neither side reported stays unreported', () => {
    expect(addCounts({ noCache: 10, output: 5 }, { noCache: 7, cacheRead: 1 })).toEqual({ noCache: 17, output: 5, cacheRead: 1 });
    expect(addCounts({ noCache: 1 }, undefined)).toEqual({ noCache: 1 });
    expect(addCounts({}, {})).toEqual({});
  });
});
