#!/usr/bin/env node
// The benchmark's stand-in for a coding CLI: prints short JSON lines to stdout.
// Every bridge under test spawns this same script, so all three see the same
// event stream.
//
//   node emit-lines.mjs --count N            as fast as the pipe takes them
//   node emit-lines.mjs --count N --rate R   paced at R lines/s, each line
//                                            stamped with its write time `t`
//                                            (monotonic ms, µs precision)
//   --pause-after K --pause-ms M             print K lines, sleep M ms, go on
//
// A line looks like {"type":"event","i":123,"text":"quick brown fox …"} (~70 B).
const args = process.argv.slice(2);
function opt(name, fallback) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? Number(args[i + 1]) : fallback;
}
const count = opt('count', 200_000);
const rate = opt('rate', 0);
const pauseAfter = opt('pause-after', 0);
const pauseMs = opt('pause-ms', 0);
const TEXT = 'the quick brown fox jumps over the lazy dog';
const CHUNK = 1000;

// A reader that went away is the end of the run, not an error worth a stack.
process.stdout.on('error', () => process.exit(0));

// CLOCK_MONOTONIC in ms with µs precision: one clock for every process on the
// machine (performance.timeOrigin differs per process by up to ~1 ms).
const now = () => Number(process.hrtime.bigint() / 1000n) / 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function write(text) {
  if (process.stdout.write(text)) return undefined;
  return new Promise((resolve) => process.stdout.once('drain', resolve));
}

async function fast(from, to) {
  for (let i = from; i < to; ) {
    const end = Math.min(to, i + CHUNK);
    let chunk = '';
    for (; i < end; i++) chunk += `{"type":"event","i":${i},"text":"${TEXT}"}\n`;
    const pending = write(chunk);
    if (pending) await pending;
  }
}

async function paced(from, to) {
  const started = now();
  let i = from;
  while (i < to) {
    const due = Math.min(to, from + Math.floor(((now() - started) * rate) / 1000) + 1);
    for (; i < due; i++) {
      const pending = write(`{"type":"event","i":${i},"t":${now().toFixed(3)},"text":"${TEXT}"}\n`);
      if (pending) await pending;
    }
    if (i < to) await sleep(1);
  }
}

const run = rate > 0 ? paced : fast;
if (pauseAfter > 0 && pauseAfter < count) {
  await run(0, pauseAfter);
  await sleep(pauseMs);
  await run(pauseAfter, count);
} else {
  await run(0, count);
}
