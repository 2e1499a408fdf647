import { defineConfig } from 'vitest/config';

// Real processes and sockets: generous timeouts, and files run in parallel
// forks (the unit lane asks for two: vitest's default on a 2-core machine is
// one, and most unit files wait on processes and sockets, not the CPU).
// `npm test` (scripts/test-lanes.mjs) runs the real-CLI E2E files two at a
// time and the chaos files one at a time, beside each other, after unit.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Marks each file's processes and counts those left at its end (no process outlives its session).
    setupFiles: ['test/process-marks-setup.ts'],
    // Hang guards, not speed checks: a CI box is a shared 2-core machine, and a case that takes 20 s alone
    // has taken 60 s there beside the other lanes.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
