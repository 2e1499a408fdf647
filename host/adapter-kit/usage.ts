// Token counts as CLIs report them (input split from cache reads and writes,
// the way Anthropic and pi-ai count, or inclusive totals split here) → LanguageModelV4Usage, and summing them
// over a turn's steps for CLIs that print no per-turn total (pi). Which counts
// a CLI reports, and when a step ends, is the adapter's.
import type { JSONValue, LanguageModelV4Usage } from '@ai-sdk/provider';

/** Counts of one step; `noCache` excludes cache reads and writes. Missing = not reported. */
export type TokenCounts = {
  noCache?: number | undefined;
  cacheRead?: number | undefined;
  cacheWrite?: number | undefined;
  output?: number | undefined;
  reasoning?: number | undefined;
};

const keys = ['noCache', 'cacheRead', 'cacheWrite', 'output', 'reasoning'] as const;

/** The V4 usage of `counts`: input total = noCache + cacheRead + cacheWrite (whichever were reported). */
export function usageFromCounts(counts: TokenCounts | undefined, raw?: Record<string, JSONValue>): LanguageModelV4Usage {
  const c = counts ?? {};
  const input = [c.noCache, c.cacheRead, c.cacheWrite].filter((n): n is number => n !== undefined);
  return {
    inputTokens: {
      total: input.length > 0 ? input.reduce((a, b) => a + b, 0) : undefined,
      noCache: c.noCache,
      cacheRead: c.cacheRead,
      cacheWrite: c.cacheWrite,
    },
    outputTokens: { total: c.output, text: undefined, reasoning: c.reasoning },
    ...(raw ? { raw } : {}),
  };
}

/**
 * Counts from totals in which `input` includes the cache reads and writes (the OpenAI and ACP way): noCache is
 * what is left of it. Missing (or null) = not reported.
 */
export function countsFromInclusiveInput(u: { input?: Count; cacheRead?: Count; cacheWrite?: Count; output?: Count; reasoning?: Count }): TokenCounts {
  const n = (x: Count) => x ?? undefined;
  const noCache = u.input == null ? undefined : Math.max(0, u.input - (u.cacheRead ?? 0) - (u.cacheWrite ?? 0));
  return { noCache, cacheRead: n(u.cacheRead), cacheWrite: n(u.cacheWrite), output: n(u.output), reasoning: n(u.reasoning) };
}
type Count = number | null | undefined;

/** Per-key sum; a key reported by neither side stays unreported. */
export function addCounts(a: TokenCounts, b: TokenCounts | undefined): TokenCounts {
  if (!b) return a;
  const sum: TokenCounts = {};
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (x !== undefined || y !== undefined) sum[key] = (x ?? 0) + (y ?? 0);
  }
  return sum;
}
