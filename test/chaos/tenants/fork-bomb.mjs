#!/usr/bin/env node
// A bounded fork bomb (test/chaos/tenants.test.ts): starts up to N `sleep` processes and holds them
// until the host writes `release` in its home area, then ends them. Writes {held, refused} to
// bomb.json there: how many started, and the error that stopped it (EAGAIN at a pids cap).
//   node fork-bomb.mjs N
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const limit = Number(process.argv[2] ?? 100);
const children = [];
let refused = null;
for (let i = 0; i < limit; i++) {
  let child;
  try {
    child = spawn('/bin/sleep', ['120'], { stdio: 'ignore' });
  } catch (error) {
    refused = error.code ?? error.message;
    break;
  }
  if (child.pid === undefined) {
    refused = await new Promise((resolve) => child.once('error', (error) => resolve(error.code ?? error.message)));
    break;
  }
  child.on('error', () => undefined);
  children.push(child);
}
writeFileSync(join(process.env.HOME, 'bomb.json'), JSON.stringify({ held: children.length, refused }));
for (let i = 0; i < 2400 && !existsSync(join(process.env.HOME, 'release')); i++) await new Promise((resolve) => setTimeout(resolve, 50));
for (const child of children) child.kill('SIGKILL');
process.stdout.write(`${JSON.stringify({ held: children.length, refused })}\n`);
