// The namespace half of the jail: sandbox-runtime (srt) over bubblewrap. Filled in with the
// network policy (egress-proxy.ts); until then no namespace is offered.
import type { AgentUser } from './agent-user.ts';
import type { NamespaceSupport } from './isolation.ts';
import type { JailArgs } from './jail-args.ts';

export async function namespaceSupport(_options: {
  user: AgentUser | undefined;
  args: JailArgs;
  stateDir: string;
  log: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}): Promise<NamespaceSupport> {
  return { ok: false, reason: 'namespace isolation is not available in this build' };
}
