// The first host process for docker-egress-tunnel.test.ts: creates a Docker session, sets its
// network policy (which starts the egress tunnel), prints `{"port":N}` once the container's proxy
// listens, and exits without stopping anything (its exec stream ends with it). Usage:
//   node --import tsx test/host/sandbox/docker-egress-first-host.ts <name prefix> <session id>
import { createDockerSandboxProvider } from '../../../host/sandbox/docker/provider.ts';

const [namePrefix, sessionId] = process.argv.slice(2) as [string, string];
const session = await createDockerSandboxProvider({ namePrefix }).createSession({ sessionId });
await session.setNetworkPolicy({ mode: 'custom', allowedCIDRs: ['127.0.0.1/32'] });
const { port } = await session.egressProxy();
process.stdout.write(`${JSON.stringify({ port })}\n`);
process.exit(0);
