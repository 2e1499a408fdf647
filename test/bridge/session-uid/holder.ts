// A bridge's part in test/bridge/session-uid.test.ts: leases a session uid for a state dir (argv: options
// JSON, state dir, optional project dir to record as handed over with owner 4242:4242, mode 0755), prints the lease
// as one JSON line and holds it until stdin ends (or it is killed).
import { leaseSessionUid } from '../../../bridge/jail/session-uid.ts';

const [optionsJson, stateDir, project] = process.argv.slice(2);
const leased = await leaseSessionUid(stateDir!, JSON.parse(optionsJson!));
// A session in mode uid (no namespace): its files may be in the shared dirs.
if (leased.ok) leased.uid.runsUnshared();
if (leased.ok && project) leased.uid.handedOver(project, { uid: 4242, gid: 4242, mode: 0o755 });
process.stdout.write(`${JSON.stringify(leased.ok ? { slot: leased.uid.slot, uid: leased.uid.user.uid, name: leased.uid.user.name } : { error: leased.reason })}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
