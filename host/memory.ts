// Opt-in memory tuning for the process that embeds the host kit. Nothing in
// the kit calls this: GC flags are process-wide, so whether to set them is the
// embedding application's choice, made once, early (before it streams).
//
// Under a sustained record stream V8 doubles the young generation's
// semi-spaces (1 → 16 MiB each on 64-bit) whenever enough bytes survive
// scavenges — which a steady stream eventually causes, since whatever is in
// flight at a scavenge survives it. For a host consuming a long turn that
// growth is most of the RSS difference between 10k and 1M records (see
// test/chaos/memory.test.ts); the bridge does the same for itself
// (bridge/young-generation.ts). Setting the growth factor at run time keeps
// the young generation at its initial size: `--max-semi-space-size` on the
// command line would do the same for the whole process but also changes
// Node's code-cache hash. Where a V8 ignores the flag, the heap grows as before.
import { setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's young generation at its initial size for the rest of this
 * process (`--semi-space-growth-factor=1`). Process-wide and not undoable:
 * call it from your application's entry point if a flat RSS under long
 * record streams matters more to you than slightly more frequent scavenges.
 */
export function limitYoungGeneration(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}
