// protocol/: the wire protocol (v1), the HarnessV1 contract declarations, and
// the package's error base with its closed list of codes.
export * from './v1/index.ts';
export * from './harness-v1/index.ts';
export * from './errors/error-codes.ts';
export * from './errors/harness-bridge-error.ts';
