// What a failed E2E case prints about itself: its sandboxes' bridge warnings, errors and egress refusals, and the scripted
// model's requests, from the case's start on. A failure that happens once in a loaded CI run (a model call
// that ends in a connection error) leaves nothing else behind: the sandboxes go with the suite.
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedRequest } from '../model-server/server.ts';

const maxLines = 40;

/** Every `bridge.log` under `root` (the local provider's sandboxes and their state dirs). */
function bridgeLogs(root: string): string[] {
  try {
    return readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name === 'bridge.log')
      .map((entry) => join(entry.parentPath, entry.name));
  } catch {
    return [];
  }
}

/** The JSON object lines of `text` with their source; a line that is no object (torn at the end) is left out. */
function jsonLines<T extends object>(text: string): Array<{ line: string; value: T }> {
  return text.split('\n').flatMap((line) => {
    try {
      const value: unknown = line === '' ? null : JSON.parse(line);
      return typeof value === 'object' && value !== null ? [{ line, value: value as T }] : [];
    } catch {
      return [];
    }
  });
}

/** Warn and error lines (pino levels 40, 50) and egress decisions logged at or after `since` (epoch ms), each with its file. */
function bridgeTrouble(root: string, since: number): string[] {
  return bridgeLogs(root).flatMap((file) => {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return [];
    }
    return jsonLines<{ level?: number; time?: number; msg?: string }>(text)
      .filter(({ value }) => ((value.level ?? 0) >= 40 || value.msg?.startsWith('egress') === true) && (value.time ?? 0) >= since)
      .map(({ line }) => `${file.slice(root.length + 1)}: ${line}`);
  });
}

/** The requests `log` (the scripted model's, one JSON line each, written on arrival) holds from byte `from` on. */
function requestsFrom(log: string, from: number): RecordedRequest[] {
  let tail = '';
  try {
    const fd = openSync(log, 'r');
    try {
      const buffer = Buffer.alloc(Math.max(0, fstatSync(fd).size - from));
      readSync(fd, buffer, 0, buffer.length, from);
      tail = buffer.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return [];
  }
  return jsonLines<RecordedRequest>(tail).map(({ value }) => value);
}

/**
 * The post-mortem of a case that started at `since` (epoch ms), when the model's `requestsLog` was `from` bytes long:
 * `text` in full, and a one-line `digest` to lead a failure's message (what a CI summary keeps).
 */
export function postMortem(root: string, since: number, requestsLog: string, from: number): { text: string; digest: string } {
  const trouble = bridgeTrouble(root, since);
  const asked = requestsFrom(requestsLog, from);
  const last = trouble.at(-1);
  const digest = `post-mortem: ${trouble.length} bridge warning(s), error(s) and egress refusal(s)${last === undefined ? '' : `, the last: ${last.length > 400 ? `${last.slice(0, 400)}…` : last}`}; ${asked.length} model request(s)`;
  const text = [
    `bridge warnings, errors and egress refusals since the case began: ${trouble.length}${trouble.length > maxLines ? ` (the last ${maxLines})` : ''}`,
    ...trouble.slice(-maxLines).map((line) => `  ${line}`),
    `scripted model requests that arrived since the case began (its log is written on arrival): ${asked.length}`,
    ...asked.slice(-maxLines).map((r) => `  #${r.seq} ${r.method} ${r.path} ${r.scenario ?? ''}`),
  ].join('\n');
  return { text, digest };
}
