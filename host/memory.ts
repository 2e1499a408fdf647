// Opt-in memory tuning for the process that embeds the host kit. Nothing in
// the kit calls this: GC flags are process-wide, so whether to set them is the
// embedding application's choice, made once, early (before it streams).
// What it caps, and why the kit leaves it to the application:
// docs/bridge-internals.md#memory (the bridge caps its own young generation
// in bridge/young-generation.ts).
import { setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's young generation at its initial size for the rest of this
 * process (`--semi-space-growth-factor=1`). Process-wide and not undoable:
 * call it from your application's entry point if a flat RSS under long
 * record streams matters more to you than slightly more frequent scavenges.
 * Call it after your imports: V8 refuses Node's code cache for a builtin
 * compiled after a flag changed, so builtins first loaded later (node:http,
 * node:tls…) take about twice the CPU to load.
 */
export function limitYoungGeneration(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}
