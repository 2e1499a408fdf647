// The AbortError a turn settles with. Not a HarnessBridgeError: the contract
// says an aborted turn settles with the DOMException-named AbortError, which
// callers recognise by `name`.

/** The DOMException-named AbortError the contract's abortSignal settles with. */
export function abortError(reason?: unknown): Error {
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new Error(typeof reason === 'string' ? reason : 'The turn was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}
