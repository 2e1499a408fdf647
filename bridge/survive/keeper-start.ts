// How a keeper process (`node bridge.mjs --keeper [--egress]`, launch `survive`) gets its CLI: the
// bridge starts it ahead of need (spare-keeper.ts) and later sends one line on its stdin,
// `{"dir": <keeper dir>, "env": <the CLI's env>}`; keeper.ts then runs that CLI. A spare may first be
// sent `{"ahead": …}`: the jail its CLI will likely need, started now (jail-ahead.ts). While it waits it loads
// what a keeper needs (node:child_process, node:http for the MCP relay and, with --egress, once it has
// waited a moment, the egress proxy's bundle), so a kept spawn costs no Node start. EOF before the line (its bridge stopped or died)
// ends it. The env never touches disk. docs/bridge-internals.md#surviving-clis.
import { isAbsolute } from 'node:path';
import { KEEPER_LIMITS } from '../limits.ts';
import { runKeeper, type LoadKeptEgress } from './keeper.ts';
import { parseAheadStart, startPreJail, type AheadStart, type PreJail } from './jail-ahead.ts';

/** A line longer than this is not a bridge's (an env is a few KiB). */
const maxLineChars = 4 * 1024 * 1024;

export type KeeperWork = { dir: string; env: Record<string, string> };

/** The stdin line's work, or why it is not one. */
export function parseKeeperWork(line: string): KeeperWork | { error: string } {
  let said: { dir?: unknown; env?: unknown };
  try {
    said = JSON.parse(line) as typeof said;
  } catch {
    return { error: 'the keeper line is not JSON' };
  }
  const { dir, env } = said ?? {};
  if (typeof dir !== 'string' || !isAbsolute(dir)) return { error: 'the keeper line has no absolute dir' };
  if (typeof env !== 'object' || env === null || Array.isArray(env) || !Object.values(env).every((v) => typeof v === 'string')) {
    return { error: 'the keeper line has no env of strings' };
  }
  return { dir, env: env as Record<string, string> };
}

export async function runKeeperFromStdin(loadEgress: LoadKeptEgress, preloadEgress: boolean): Promise<void> {
  let egress: ReturnType<LoadKeptEgress> | undefined;
  const loadEgressOnce: LoadKeptEgress = () => (egress ??= loadEgress());
  // Loaded while the bridge has no CLI for this keeper yet; runKeeper awaits each where it needs it.
  const warm = Promise.all([import('node:child_process'), import('node:http')]);
  warm.catch(() => undefined);
  // The egress proxy's load holds the main thread ~20 ms: a spare (still waiting) loads it; a keeper taken at
  // once spawns its CLI first and loads it while the CLI starts (keeper.ts), and a failure shows there.
  const preload = preloadEgress ? setTimeout(() => void loadEgressOnce().catch(() => undefined), KEEPER_LIMITS.egressPreloadAfterMs) : undefined;
  // Lines in order: an optional `{"ahead": …}` (jail-ahead.ts), then the work.
  const lines: string[] = [];
  let waiting: ((line: string | null) => void) | null = null;
  let ended = false;
  let text = '';
  const nextLine = (): Promise<string | null> =>
    lines.length > 0 ? Promise.resolve(lines.shift()!) : ended ? Promise.resolve(null) : new Promise((resolve) => (waiting = resolve));
  const hand = (line: string | null): void => {
    if (line === null) ended = true;
    else lines.push(line);
    const take = waiting;
    waiting = null;
    if (take !== null) take(lines.length > 0 ? lines.shift()! : null);
  };
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    text += chunk;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n')) {
      hand(text.slice(0, nl));
      text = text.slice(nl + 1);
    }
    if (text.length > maxLineChars) hand(null);
  });
  process.stdin.once('end', () => hand(null));
  process.stdin.once('error', () => hand(null));
  let line = await nextLine();
  let pre: PreJail | undefined;
  const start = line === null ? undefined : aheadOf(line);
  if (start !== undefined) {
    const started = start === 'invalid' ? { error: 'the ahead line is not one' } : await startPreJail(start);
    // A jail that could not start is no jail: the CLI then starts the usual way (spec.json decides, keeper.ts).
    if (!('error' in started)) pre = started;
    line = await nextLine();
  }
  clearTimeout(preload);
  if (line === null) {
    pre?.discard();
    process.exit(0); // no CLI for this keeper: its bridge stopped or died
  }
  // From here only the CLI's exit (or its dir's removal) ends this keeper, not its stdin.
  process.stdin.removeAllListeners('data');
  process.stdin.removeAllListeners('end');
  process.stdin.on('error', () => undefined);
  process.stdin.pause();
  const work = parseKeeperWork(line);
  if ('error' in work) {
    pre?.discard();
    process.stdout.write(`${JSON.stringify({ error: work.error })}\n`);
    process.exit(0);
  }
  await runKeeper(work.dir, loadEgressOnce, work.env, pre);
}

/** The ahead line's start (`{"ahead": …}`), 'invalid' for one that is not well formed, undefined for any other line. */
function aheadOf(line: string): AheadStart | 'invalid' | undefined {
  let said: { ahead?: unknown };
  try {
    said = JSON.parse(line) as typeof said;
  } catch {
    return undefined;
  }
  if (said === null || typeof said !== 'object' || !('ahead' in said)) return undefined;
  return parseAheadStart(said.ahead) ?? 'invalid';
}
