// protocol/: the wire protocol (v1) and the HarnessV1 contract declarations.
export * from './v1/index.ts';
export * from './harness-v1/index.ts';
