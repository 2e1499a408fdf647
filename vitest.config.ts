import { defineConfig } from 'vitest/config';

// Real processes and sockets: generous timeouts, and files run in parallel
// forks. `npm test` runs the chaos suite and the real-CLI E2E files in a
// second, serial pass (test:heavy): on these 2-core machines they saturate
// the CPU and would starve timing-sensitive unit tests running beside them.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
