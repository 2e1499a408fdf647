import { defineConfig } from 'vitest/config';

// Real processes and sockets: generous timeouts, and files run in parallel
// forks (2 cores here) so one slow E2E file does not serialise the rest.
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
