// The recomputed and re-delivered marks, in the forms @ai-sdk/harness 1.0.x
// passes on to the user (docs/guarantees.md#marks). It drops stream-start
// warnings and forwards raw parts to fullStream only; it keeps harnessMetadata:
// a text or reasoning block's becomes the UI message part's providerMetadata
// (readUIMessageStream, useChat), a finish-step's the step's providerMetadata,
// the finish's the result's (stream and generate()). So a block that opens in
// a marked range carries the mark on its parts, and every finish-step and
// finish of the slice carries what the slice marked so far, all under
// `harnessBridge`.
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';

/** What a slice (one stream) marked: the rerun turn it recomputed, the journal ranges it delivered again. */
export type SliceMarks = {
  recomputed?: { turnId: string; rerunOf?: string };
  redelivered?: Array<{ afterSeq: number; throughSeq: number }>;
};

/** The mark a block carries: the rerun turn, or the re-delivered range it opened in. */
export type BlockMark = { recomputed: { turnId: string; rerunOf?: string } } | { redelivered: { afterSeq: number; throughSeq: number } };

type Meta = NonNullable<Extract<HarnessV1StreamPart, { type: 'finish' }>['harnessMetadata']>;

/** `parts` with the marks: block parts under `block` (starts always, others that carry metadata of their own), finishes with `slice`'s. */
export function withMarks(parts: ReadonlyArray<HarnessV1StreamPart>, block: BlockMark | undefined, slice: SliceMarks): HarnessV1StreamPart[] {
  const sliceMark = Object.keys(slice).length > 0 ? slice : undefined;
  return parts.map((part) => {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start':
        return block ? { ...part, harnessMetadata: merged(part.harnessMetadata, block) } : part;
      case 'text-delta':
      case 'text-end':
      case 'reasoning-delta':
      case 'reasoning-end':
        // A part with metadata of its own would replace the start's in the UI part: it carries the mark too.
        return block && part.harnessMetadata ? { ...part, harnessMetadata: merged(part.harnessMetadata, block) } : part;
      case 'finish-step':
      case 'finish':
        return sliceMark ? { ...part, harnessMetadata: merged(part.harnessMetadata, sliceMark) } : part;
      default:
        return part;
    }
  });
}

/** Notes `block` in the slice's marks (a range once). */
export function noteMark(slice: SliceMarks, block: BlockMark): void {
  if ('recomputed' in block) {
    slice.recomputed = block.recomputed;
    return;
  }
  const ranges = (slice.redelivered ??= []);
  const range = block.redelivered;
  if (!ranges.some((known) => known.afterSeq === range.afterSeq && known.throughSeq === range.throughSeq)) ranges.push({ ...range });
}

function merged(meta: Meta | undefined, mark: SliceMarks | BlockMark): Meta {
  const own = meta?.harnessBridge;
  const base = typeof own === 'object' && own !== null && !Array.isArray(own) ? own : {};
  return { ...meta, harnessBridge: { ...base, ...JSON.parse(JSON.stringify(mark)) } };
}
