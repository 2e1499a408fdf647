// The one error replay tooling throws for input it cannot use.
export type SourceErrorCode = 'unreadable' | 'empty' | 'corrupt' | 'unknown-format';

export type SourceErrorWhere = {
  readonly file?: string;
  /** 1-based line. */
  readonly line?: number;
  /** Byte offset of that line in the file. */
  readonly offset?: number;
  /** What the reader expected to find there. */
  readonly expected?: string;
};

/**
 * A source that cannot be read: `FILE:LINE: what is wrong (byte OFFSET;
 * expected …)`. `file`/`line` name the first bad line when there is one,
 * `offset` where it starts, `expected` what a valid line looks like.
 */
export class SourceError extends Error {
  readonly code: SourceErrorCode;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly offset: number | undefined;
  readonly expected: string | undefined;
  constructor(code: SourceErrorCode, message: string, where: SourceErrorWhere = {}) {
    const details = [where.offset === undefined ? undefined : `byte ${where.offset}`, where.expected === undefined ? undefined : `expected ${where.expected}`].filter(
      (detail) => detail !== undefined,
    );
    super(`${where.file === undefined ? '' : `${where.file}${where.line === undefined ? '' : `:${where.line}`}: `}${message}${details.length > 0 ? ` (${details.join('; ')})` : ''}`);
    this.name = 'SourceError';
    this.code = code;
    this.file = where.file;
    this.line = where.line;
    this.offset = where.offset;
    this.expected = where.expected;
  }
}
