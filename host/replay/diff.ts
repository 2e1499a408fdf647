// Where two translations first differ: the same recording through two adapter
// versions, or two recordings through one. Parts compare as plain JSON (key
// order as produced, undefined keys dropped); seq and turn are context only,
// so two runs of the same session with different seqs can still match.
// Streams: both sides are walked in step, keeping only the context parts.
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

/** The first difference, or undefined when both translations are the same. Counting each side's length reads both to their end. */
export function diffTranslations(a: Iterable<TranslatedPart>, b: Iterable<TranslatedPart>, contextParts = 2): PartsDiff | undefined {
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  const context: TranslatedPart[] = [];
  let index = 0;
  try {
    for (;; index++) {
      const x = left.next();
      const y = right.next();
      if (x.done && y.done) return undefined;
      if (!x.done && !y.done && partText(x.value) === partText(y.value)) {
        context.push(x.value);
        if (context.length > contextParts) context.shift();
        continue;
      }
      const rest = (side: Iterator<TranslatedPart>, ended: boolean): number => {
        if (ended) return index;
        let length = index + 1;
        while (!side.next().done) length++;
        return length;
      };
      return {
        index,
        a: x.done ? undefined : x.value,
        b: y.done ? undefined : y.value,
        context: contextParts > 0 ? context : [],
        lengths: { a: rest(left, x.done === true), b: rest(right, y.done === true) },
      };
    }
  } finally {
    left.return?.();
    right.return?.();
  }
}

/** A part as the JSON the comparison uses. */
export function partText(part: TranslatedPart): string {
  return JSON.stringify(part.part);
}
