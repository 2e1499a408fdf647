#!/usr/bin/env node
// A bounded fork bomb (test/chaos/tenants.test.ts): starts up to N `sleep` processes and holds them
// until the host writes `release` in its home area, then ends them. Writes {held, refused} to
// bomb.json there: how many ran at once, and the error that stopped it (EAGAIN at a pids cap).
//   node fork-bomb.mjs N
import { spawn } from 'node:child_process';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
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
const held = children.length;
// At the cap, a few slots back, so the CLI that ran this (its own threads, its next read) goes on working.
if (refused !== null) for (const child of children.splice(0, 8)) child.kill('SIGKILL');
// Whole or not there: the host reads it as soon as it exists.
writeFileSync(join(process.env.HOME, 'bomb.json.tmp'), JSON.stringify({ held, refused }));
renameSync(join(process.env.HOME, 'bomb.json.tmp'), join(process.env.HOME, 'bomb.json'));
for (let i = 0; i < 2400 && !existsSync(join(process.env.HOME, 'release')); i++) await new Promise((resolve) => setTimeout(resolve, 50));
for (const child of children) child.kill('SIGKILL');
process.stdout.write(`${JSON.stringify({ held, refused })}\n`);
