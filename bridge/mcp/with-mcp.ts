// The supervisor as the server sees it once the MCP endpoint is up: each start's host tools become
// the endpoint's (the running turn's only), and the endpoint's URL and token into the launch's env. Serving the tools is
// endpoint.ts's; running the CLI the supervisor's.
import type { SupervisorPort } from '../server/server-seams.ts';
import type { McpEndpoint } from './endpoint.ts';

/** A SupervisorPort that feeds each start's tools to the endpoint and merges its env into the launch. */
export function withMcp<P extends SupervisorPort>(supervisor: P, endpoint: McpEndpoint): SupervisorPort {
  return {
    get state() {
      return supervisor.state;
    },
    get turnId() {
      return supervisor.turnId;
    },
    start(turnId, launch, input, meta) {
      // Only a start that can start a turn changes the callable tools (a refused one must not touch the running turn's).
      if (supervisor.state === 'idle') endpoint.setTurnTools(meta?.tools);
      return supervisor.start(turnId, endpoint.launchWithEnv(launch), input, meta);
    },
    write: (turnId, text) => supervisor.write(turnId, text),
    signal: (turnId, signal) => supervisor.signal(turnId, signal),
    abort: (turnId, graceMs) => supervisor.abort(turnId, graceMs),
    // The launch a start would spawn: with the endpoint's env, as start gives it (the jail it needs names the endpoint's port).
    expect: (launch) => supervisor.expect?.(endpoint.launchWithEnv(launch)) ?? { ok: true },
  };
}
