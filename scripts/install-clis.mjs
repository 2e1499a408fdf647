#!/usr/bin/env node
// Command line for the CLI installer (host/cli/install-clis.mjs): installs the
// pinned coding-agent CLIs into the cache and prints one absolute bin path per
// line. Usage: node scripts/install-clis.mjs <claude-code|codex|pi|claude-code-acp|codex-acp|all>...
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLIS, cliPaths, ensureCli } from '../host/cli/install-clis.mjs';

async function main(argv) {
  const names = argv.length === 0 ? [] : argv.includes('all') ? Object.keys(CLIS) : argv;
  if (names.length === 0) {
    process.stderr.write(`usage: install-clis.mjs <${Object.keys(CLIS).join('|')}|all>...\n`);
    return 2;
  }
  for (const n of names) cliPaths(n); // a RangeError for an unknown name, before installing anything
  // One absolute bin path per line on stdout, so the last line is the last CLI's bin.
  for (const n of names) {
    const { binPath } = await ensureCli(n);
    process.stdout.write(`${binPath}\n`);
  }
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
