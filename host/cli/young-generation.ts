// Imported first by main.ts, so it runs before the rest of the CLI allocates.
// The offline tools (replay, inspect, view) stream files of any size as a flood of
// short-lived records; V8 would grow its young generation to 2 × 16 MiB under
// it, and let old space fill with what the small one promotes: together a
// third of their memory bound (test/chaos/offline-tools.test.ts). Keeping the
// young generation at its initial size (host/memory.ts, as the bridge does for
// itself) and favouring size over speed (V8's --optimize-for-size: smaller
// heap growth steps; ~20% slower) holds them flat. Set before the bundle's
// modules run, or it comes too late to matter. The other commands run host
// sessions and keep V8's defaults.
import { setFlagsFromString } from 'node:v8';
import { limitYoungGeneration } from '../memory.ts';

const command = process.argv[2];
if (command === 'replay' || command === 'inspect' || command === 'view') {
  limitYoungGeneration();
  setFlagsFromString('--optimize-for-size');
}
