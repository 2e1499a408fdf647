// Where two translations first differ: the same recording through two adapter
// versions, or two recordings through one. Parts compare as plain JSON (key
// order as produced, undefined keys dropped); seq and turn are context only,
// so two runs of the same session with different seqs can still match.
import type { TranslatedPart } from './retranslate.ts';

export type PartsDiff = {
  /** 0-based index of the first part that differs (or that only one side has). */
  readonly index: number;
  readonly a: TranslatedPart | undefined;
  readonly b: TranslatedPart | undefined;
  /** The parts before `index` that both sides agree on, at most `contextParts`. */
  readonly context: ReadonlyArray<TranslatedPart>;
  readonly lengths: { readonly a: number; readonly b: number };
};

/** The first difference, or undefined when both translations are the same. */
export function diffTranslations(a: ReadonlyArray<TranslatedPart>, b: ReadonlyArray<TranslatedPart>, contextParts = 2): PartsDiff | undefined {
  const length = Math.max(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const left = a[index];
    const right = b[index];
    if (left && right && partText(left) === partText(right)) continue;
    return {
      index,
      a: left,
      b: right,
      context: a.slice(Math.max(0, index - contextParts), index),
      lengths: { a: a.length, b: b.length },
    };
  }
  return undefined;
}

/** A part as the JSON the comparison uses. */
export function partText(part: TranslatedPart): string {
  return JSON.stringify(part.part);
}
