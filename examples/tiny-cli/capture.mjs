// Captures tiny-cli's real output against the scripted model server into
// fixtures/<case>.jsonl, one stdout line per line (docs/writing-an-adapter.md#tutorial).
// The thread id changes on each capture; nothing else does.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelServer } from 'harness-bridge/testing';

const cases = {
  text: ['SCENARIO:text say hi'],
  slow: ['SCENARIO:slow CHUNKS:6 INTERVAL:10 stream slowly'],
  'two-prompts': ['SCENARIO:text first prompt', 'SCENARIO:text second prompt'],
  error: ['SCENARIO:fail'],
};

const model = await startModelServer();
const cwd = mkdtempSync(join(tmpdir(), 'tiny-cli-capture-'));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
mkdirSync(fixtures, { recursive: true });
try {
  for (const [name, prompts] of Object.entries(cases)) {
    const cli = spawn(process.execPath, [fileURLToPath(new URL('./tiny-cli.mjs', import.meta.url))], {
      cwd,
      env: { PATH: process.env.PATH, TINY_BASE_URL: `${model.url}/v1` },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let stdout = '';
    cli.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    const exited = new Promise((resolve) => cli.on('close', resolve));
    for (const text of prompts) cli.stdin.write(`${JSON.stringify({ type: 'prompt', text })}\n`);
    cli.stdin.end(); // tiny-cli answers its queued prompts, then exits
    await exited;
    writeFileSync(join(fixtures, `${name}.jsonl`), stdout);
    console.log(`fixtures/${name}.jsonl: ${stdout.split('\n').length - 1} lines`);
  }
} finally {
  await model.close();
  rmSync(cwd, { recursive: true, force: true });
}
