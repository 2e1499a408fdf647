// A turn whose fixture CLI (echo mode, a session CLI) fetches URLs through its shell from inside
// the jail, the way a coding CLI's command would (test/chaos/insider/fetch.mjs honours the proxy
// variables srt sets): the start frame, and the fetch results read back from the turn's records.
// Shared by the network policy tests.
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RecordOf } from '../../protocol/v1/index.ts';
import { fixtureCli, repoRoot, type TestClient } from '../bridge/helpers.ts';

export type Fetched = { url: string; status?: number; body?: string; error?: string };

const fetchScript = join(repoRoot, 'test/chaos/insider/fetch.mjs');

/**
 * Starts turn `turnId` on the session CLI in `cwd` (spawned by the first turn); `survive` keeps it under a keeper;
 * `env` is the launch's (a URL there names a local endpoint allow-all lets the CLI reach: bridge/jail/named-endpoints.ts).
 */
export function startFetchTurn(client: TestClient, turnId: string, cwd: string, urls: string[], options: { survive?: boolean; env?: Record<string, string> } = {}): Promise<unknown> {
  const shell = `exec ${process.execPath} ${fetchScript} ${urls.map((u) => `"${u}"`).join(' ')}`;
  return client.request({
    type: 'start',
    id: turnId,
    turnId,
    launch: {
      argv: [process.execPath, fixtureCli, '--echo'],
      cwd,
      stdin: 'pipe',
      lifetime: 'session',
      ...(options.survive ? { survive: true } : {}),
      ...(options.env ? { env: options.env } : {}),
      turnEnd: [{ stream: 'stdout', json: { path: ['type'], equals: 'result' } }],
    },
    input: `${JSON.stringify({ type: 'prompt', text: 'fetch', lines: 0, shell })}\n`,
  });
}

/** Waits for the turn's end; what each URL gave, in order. */
export async function fetchResults(client: TestClient, turnId: string): Promise<Fetched[]> {
  await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === turnId, 60_000);
  const line = client
    .records()
    .filter((r): r is RecordOf<'stdout'> => r.kind === 'stdout' && r.turnId === turnId)
    .map((r) => JSON.parse(r.data.text) as { type: string; stdout?: string })
    .find((l) => l.type === 'shell');
  expect(line, `the shell ran: ${JSON.stringify(client.records().filter((r) => r.turnId === turnId)).slice(0, 3000)}`).toBeDefined();
  return line!.stdout!.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Fetched);
}
