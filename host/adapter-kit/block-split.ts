// A text or reasoning block is never left open across a part the UI shows on its own (a tool call or
// result, an approval request, a compaction, a file change): the kit ends the block right before
// such a part, and when the adapter goes on with that block, opens a new one after it (the same start
// part, id `<id>.<seq>`: derived from the record, so a replay gives the same id). The UI message
// then shows the text in the order it came, and a turn cut after that part and continued folds to
// the same message: readUIMessageStream finds a block only among its own stream's parts, so a block
// the earlier stream left open would be ended in a new, empty part (docs/guarantees.md#ui).
import type { JSONValue } from '@ai-sdk/provider';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { streamPartSchema } from '../../protocol/harness-v1/stream-part-schema.ts';
import { blockKey } from './turn-parts.ts';

type Part = HarnessV1StreamPart;
type Start = Extract<Part, { type: 'text-start' | 'reasoning-start' }>;

/** Parts the UI shows as parts of their own: a block left open across one is ended before it. */
const SHOWN_APART = new Set<Part['type']>(['tool-call', 'tool-result', 'tool-approval-request', 'compaction', 'file-change']);

export type BlockSplitSnapshot = {
  /** The text and reasoning blocks open now, by the adapter's key: the start part as sent (its current id). */
  open: Array<[string, JSONValue]>;
  /** The adapter's blocks the kit ended before a part shown apart, not yet gone on with: their start part. */
  ended: Array<[string, JSONValue]>;
};

export class BlockSplit {
  readonly #open = new Map<string, Start>();
  readonly #ended = new Map<string, Start>();

  constructor(snapshot?: BlockSplitSnapshot) {
    load(this.#open, snapshot?.open);
    load(this.#ended, snapshot?.ended);
  }

  /** The parts of the record `seq` with the blocks split around parts shown apart. */
  apply(parts: ReadonlyArray<Part>, seq: number): Part[] {
    const out: Part[] = [];
    for (const part of parts) {
      const block = part.type.startsWith('tool-input-') ? undefined : blockKey(part);
      if (block === undefined) {
        if (SHOWN_APART.has(part.type)) this.#endOpen(out);
        out.push(part);
        continue;
      }
      const { key, role } = block;
      if (role === 'start') {
        this.#ended.delete(key);
        this.#open.set(key, part as Start);
        out.push(part);
        continue;
      }
      const ended = this.#ended.get(key);
      if (ended !== undefined) {
        this.#ended.delete(key);
        if (role === 'end') continue; // ended already, before the part shown apart
        const start = { ...ended, id: `${(part as { id: string }).id}.${seq}` } as Start;
        this.#open.set(key, start);
        out.push(start);
      }
      const start = this.#open.get(key);
      out.push(start === undefined || start.id === (part as { id: string }).id ? part : ({ ...part, id: start.id } as Part));
      if (role === 'end') this.#open.delete(key);
    }
    return out;
  }

  snapshot(): BlockSplitSnapshot {
    return { open: dump(this.#open), ended: dump(this.#ended) };
  }

  #endOpen(out: Part[]): void {
    for (const [key, start] of this.#open) {
      out.push({ type: start.type === 'text-start' ? 'text-end' : 'reasoning-end', id: start.id } as Part);
      this.#ended.set(key, start);
    }
    this.#open.clear();
  }
}

function dump(starts: ReadonlyMap<string, Start>): Array<[string, JSONValue]> {
  return [...starts].map(([key, start]) => [key, JSON.parse(JSON.stringify(start)) as JSONValue]);
}

function load(into: Map<string, Start>, entries: ReadonlyArray<[string, JSONValue]> | undefined): void {
  for (const [key, json] of entries ?? []) {
    const parsed = streamPartSchema.safeParse(json);
    if (parsed.success && (parsed.data.type === 'text-start' || parsed.data.type === 'reasoning-start')) into.set(key, parsed.data);
  }
}
