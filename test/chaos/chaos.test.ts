// The chaos lanes over journaled and live turns, and the SIGKILL lane with a surviving CLI
// (test/chaos/chaos-lanes.ts says what each does). The SIGKILL lane without one is
// chaos-sigkill.test.ts: the two files run at once under the CPU hog, about as long each.
import { defineChaosLanes } from './chaos-lanes.ts';

defineChaosLanes(['replay', 'live', 'liveExec', 'liveHosted', 'survive']);
