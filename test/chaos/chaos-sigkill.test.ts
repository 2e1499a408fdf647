// The chaos lane that SIGKILLs the bridge mid-turn and takes the replay and rerun rungs
// (test/chaos/chaos-lanes.ts says what it does). The other lanes are chaos.test.ts.
import { defineChaosLanes } from './chaos-lanes.ts';

defineChaosLanes(['sigkill']);
