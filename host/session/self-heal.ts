// What a session says when its channel revived a dead bridge (host/reach/revive.ts,
// docs/guarantees.md#bridge-crash). The channel has re-attached at the session's
// cursor by itself, inside the same turn and stream, with its queued requests
// (a host tool answer given meanwhile) kept; the session takes the new bridge as
// its link (later channels and resume states name it) and notes the rung.
import type { BridgeLink } from '../reach/ladder.ts';
import type { Revived } from '../reach/revive.ts';

/** The warning a revival is reported with: which bridge died, which one runs now, and on what rung. */
export function revivedReport(before: BridgeLink, revived: Revived, cursor: number): { message: string; attrs: Record<string, unknown> } {
  const how = 'a new bridge on the same journal (it adopts a CLI its keeper kept; a turn whose CLI died is recomputed)';
  return {
    message: `bridge ${before.hello.bridgeId} died; the session continues on ${how}: bridge ${revived.link.hello.bridgeId}, rung ${revived.rung}, cursor ${cursor}`,
    attrs: { rung: revived.rung, deadBridgeId: before.hello.bridgeId, bridgeId: revived.link.hello.bridgeId, cursor },
  };
}
