// Translator snapshots (Translator.snapshot / restore in host/adapter-kit/adapter.ts): zod
// shapes of the plain-data pieces translators share (line buffers, stream
// state, token counts), and the two halves every adapter needs — a JSON copy of
// its state, and a validating restore that refuses anything else with a clear
// error (the kit then replays the turn instead). Which fields a state has is
// the adapter's.
import type { JSONValue } from '@ai-sdk/provider';
import { z } from 'zod';
import type { LineBuffers } from './json-lines.ts';
import type { StreamState } from './part-writer.ts';
import type { TokenCounts } from './usage.ts';

const pending = z.strictObject({ text: z.string(), truncated: z.boolean() }).nullable();
export const lineBuffersSchema: z.ZodType<LineBuffers> = z.strictObject({ stdout: pending, stderr: pending });

const count = z.number().optional();
export const tokenCountsSchema: z.ZodType<TokenCounts> = z.strictObject({ noCache: count, cacheRead: count, cacheWrite: count, output: count, reasoning: count });

export const streamStateSchema: z.ZodType<StreamState> = z.strictObject({
  started: z.boolean(),
  finished: z.boolean(),
  block: z.strictObject({ type: z.enum(['text', 'reasoning']), id: z.string(), key: z.string().optional(), fed: z.boolean().optional() }).nullable(),
  held: z.array(z.unknown()).optional(),
  inputs: z.record(z.string(), z.string()).optional(),
  calls: z.record(z.string(), z.strictObject({ toolName: z.string(), path: z.string().optional(), fileEvent: z.enum(['create', 'modify', 'delete']).optional() })).optional(),
  heldStep: tokenCountsSchema.optional(),
  total: tokenCountsSchema.optional(),
  stepContent: z.literal(true).optional(),
});

/**
 * `{ cli, v, state }`, `state` a JSON copy of the translator's: it shares nothing with the live state
 * (the translator goes on mutating that) and drops undefined fields, as the resume payload's JSON would.
 */
export function takeSnapshot(cli: string, version: number, state: Record<string, unknown>): JSONValue {
  return JSON.parse(JSON.stringify({ cli, v: version, state })) as JSONValue;
}

/** The state a snapshot `shape` describes (a translator whose state is all snapshot can declare its type this way). */
export type SnapshotState<Shape extends z.ZodRawShape> = z.output<z.ZodObject<Shape, z.core.$strict>>;

/** The state in a `takeSnapshot(cli, version, …)` snapshot, validated against `shape`; anything else is a clear error. */
export function readSnapshot<Shape extends z.ZodRawShape>(cli: string, version: number, shape: Shape, snapshot: unknown): SnapshotState<Shape> {
  const tag = z.looseObject({ cli: z.literal(cli), v: z.literal(version) }).safeParse(snapshot);
  if (!tag.success) {
    const found = z.looseObject({ cli: z.unknown(), v: z.unknown() }).safeParse(snapshot).data;
    throw new Error(`${cli}: not a ${cli} translator snapshot v${version} (found cli ${JSON.stringify(found?.cli) ?? 'none'}, v ${JSON.stringify(found?.v) ?? 'none'})`);
  }
  const parsed = z.strictObject({ cli: z.string(), v: z.number(), state: z.strictObject(shape) }).safeParse(snapshot);
  if (!parsed.success) throw new Error(`${cli}: corrupt translator snapshot: ${z.prettifyError(parsed.error)}`);
  return parsed.data.state;
}

/**
 * Translator.snapshot and restore for a state that `shape` describes, under one tag. `config` names fields that
 * are configuration, not state (a model id from the adapter's options): snapshots leave them out and restore
 * puts the adapter's own values back.
 */
export function snapshotCodec<Shape extends z.ZodRawShape, Config extends Record<string, unknown> = Record<never, never>>(
  cli: string,
  version: number,
  shape: Shape,
  config?: Config,
) {
  return {
    snapshot: (state: Record<string, unknown>): JSONValue => {
      const copy = { ...state };
      for (const key of Object.keys(config ?? {})) delete copy[key];
      return takeSnapshot(cli, version, copy);
    },
    restore: (snapshot: JSONValue): SnapshotState<Shape> & Config => ({ ...readSnapshot(cli, version, shape, snapshot), ...config }) as SnapshotState<Shape> & Config,
  };
}
