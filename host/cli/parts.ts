// How the CLI shows stream parts: a listing (one part per line, with its seq,
// for replay) and a live printer (text flows inline, everything else is a
// tagged line) for run and demo. Presentation only.
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { TranslatedPart } from '../replay/retranslate.ts';
import type { Style } from './style.ts';

/** One line: index, seq, turn, type and the part's other fields as compact JSON. */
export function partLine(entry: TranslatedPart, index: number, style: Style): string {
  const { type, ...rest } = entry.part;
  const body = JSON.stringify(rest);
  return `${style.dim(`#${String(index).padStart(4)}  seq ${String(entry.seq).padStart(5)}`)}  ${colourType(type, style)}${body === '{}' ? '' : ` ${clip(body, 200)}`}`;
}

export type StreamPrinter = {
  part(part: HarnessV1StreamPart): void;
  /** A line of commentary between parts (starts on a fresh line). */
  note(text: string): void;
  /** Ends an open text line. */
  flush(): void;
};

/** Prints parts as they stream: deltas inline, other parts as tagged lines. */
export function createStreamPrinter(write: (text: string) => void, style: Style, indent = '  '): StreamPrinter {
  let midLine = false;
  const line = (text: string) => {
    if (midLine) write('\n');
    midLine = false;
    write(`${indent}${text}\n`);
  };
  const inline = (text: string, colour: (s: string) => string) => {
    const lines = text.split('\n');
    lines.forEach((piece, i) => {
      if (i > 0) {
        write('\n');
        midLine = false;
      }
      if (piece.length === 0) return;
      if (!midLine) write(indent + style.dim('│ '));
      write(colour(piece));
      midLine = true;
    });
  };
  return {
    part(part) {
      switch (part.type) {
        case 'text-delta':
          return inline(part.delta, (s) => s);
        case 'reasoning-delta':
          return inline(part.delta, style.dim);
        case 'text-start':
        case 'text-end':
        case 'reasoning-start':
        case 'reasoning-end':
          return;
        case 'stream-start':
          return line(style.dim(`▶ stream-start${part.modelId ? ` model ${part.modelId}` : ''}${part.warnings?.length ? ` ${style.yellow(`warnings: ${part.warnings.map((w) => ('message' in w ? w.message : w.type)).join('; ')}`)}` : ''}`));
        case 'tool-call':
          return line(`${style.magenta('⚙ tool-call')} ${style.bold(part.toolName)}${part.providerExecuted ? style.dim(' (CLI builtin)') : style.cyan(' (host tool)')} ${clip(part.input, 120)}`);
        case 'tool-result':
          return line(`${style.magenta('↩ tool-result')} ${part.toolName}${part.isError ? style.red(' error') : ''} ${clip(JSON.stringify(part.result ?? null), 120)}`);
        case 'tool-approval-request':
          return line(`${style.yellow('? approval-request')} ${part.approvalId}`);
        case 'file-change':
          return line(`${style.green('✎ file-change')} ${part.event} ${part.path}`);
        case 'finish-step':
          return line(style.dim(`· finish-step ${part.finishReason.unified}`));
        case 'finish':
          return line(`${style.green('■ finish')} ${part.finishReason.unified}${part.finishReason.raw ? style.dim(` (${part.finishReason.raw})`) : ''}`);
        case 'error':
          return line(style.red(`✖ error ${clip(JSON.stringify(part.error), 160)}`));
        case 'raw': {
          // Lines the adapter keeps raw (status pings, echoes): one dim word each, the detail is in replay.
          const raw: unknown = part.rawValue;
          const fields = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
          const label = [fields.type, fields.subtype].filter((v) => typeof v === 'string').join('/');
          return line(style.dim(`· raw ${label || 'value'}`));
        }
        default: {
          const { type, ...rest } = part;
          return line(style.dim(`[${type}] ${clip(JSON.stringify(rest), 120)}`));
        }
      }
    },
    note(text) {
      line(text);
    },
    flush() {
      if (midLine) write('\n');
      midLine = false;
    },
  };
}

function colourType(type: string, style: Style): string {
  if (type.startsWith('text')) return type;
  if (type.startsWith('tool')) return style.magenta(type);
  if (type === 'error') return style.red(type);
  if (type.startsWith('finish')) return style.green(type);
  return style.cyan(type);
}

export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
