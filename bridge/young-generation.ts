// Keeps V8's young generation at its initial size (imported first by
// after-ready.ts, so it runs before the rest of stage 2 allocates).
//
// Under a sustained record stream V8 doubles the semi-spaces (1 → 16 MiB
// each on 64-bit) whenever the bytes that survived scavenges since the last
// growth exceed the current capacity — which any steady stream eventually
// does, since whatever is in flight at a scavenge survives it. That growth
// was most of the bridge's RSS gain between 10k and 1M journaled records
// (bench rss: 1.45×). The cap is the growth factor, set at run time:
// `--max-semi-space-size` would do the same from the command line, but any
// heap flag there makes Node reject its embedded code cache (V8 checks a hash
// of the flags) and costs ~5–8 ms of every cold start; the growth factor is
// read each time V8 considers growing, and V8 clamps it to ≥ 2 only while
// configuring the heap, so setting it afterwards holds. Checked on Node 18 and
// 20; where a V8 ignores it, the heap simply grows as before.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--semi-space-growth-factor=1');
