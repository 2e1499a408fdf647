// Keeps V8's young generation at its initial size (imported first by
// after-ready.ts, so it runs before the rest of stage 2 allocates). Under a
// steady record stream V8 would double the semi-spaces up to 16 MiB each, most
// of the bridge's RSS growth over a long turn. Set at run time because a heap
// flag on the command line costs every cold start Node's embedded code cache.
// Why and how: docs/bridge-internals.md#memory.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--semi-space-growth-factor=1');
