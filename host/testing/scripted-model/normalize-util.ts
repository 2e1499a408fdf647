// Small helpers shared by the API flavours' request normalisers.

export type Json = Record<string, unknown>;

export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Text of a tool result / message content: a string, or an array of parts with `text`. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        if (typeof p === 'string') return p;
        if (isObj(p) && typeof p.text === 'string') return p.text;
        if (isObj(p) && typeof p.tool_name === 'string') return `[tool_reference ${p.tool_name}]`;
        return '';
      })
      .filter((t) => t.length > 0)
      .join('\n');
  }
  return '';
}
