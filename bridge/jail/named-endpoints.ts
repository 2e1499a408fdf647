// The local endpoints a CLI's launch names: every http(s)/ws(s) URL in its env values (a model's base
// URL, pi's provider JSON, an extraEnv service), as `host:port`. Under allow-all the egress proxy lets a
// jailed CLI reach a destination of this machine (loopback or a local interface) only when its launch
// named that host and port (docs/security.md#network-policy): the application pointed the CLI there;
// nothing else on the host's loopback (another session's services, the host's control planes) is the
// internet allow-all means. The env is the host's (the adapter's launch), never the agent's.

/** At most this many names per proxy (a launch with more URLs names the first ones). */
export const MAX_NAMED_ENDPOINTS = 64;

const urlPattern = /\b(https?|wss?):\/\/(?:[^\s/@"'`]*@)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?/g;
const defaultPorts: Record<string, number> = { http: 80, ws: 80, https: 443, wss: 443 };

/** `host:port` keys (host lowercased, without brackets or a trailing dot) of the URLs in `env`'s values. */
export function endpointsNamedBy(env: Readonly<Record<string, string>> | undefined): string[] {
  const found = new Set<string>();
  for (const value of Object.values(env ?? {})) {
    for (const match of value.matchAll(urlPattern)) {
      const port = match[3] === undefined ? defaultPorts[match[1]!.toLowerCase()]! : Number(match[3]);
      if (port < 1 || port > 65_535) continue;
      found.add(endpointKey(match[2]!, port));
      if (found.size >= MAX_NAMED_ENDPOINTS) return [...found];
    }
  }
  return [...found];
}

/** The key a destination is looked up by: the host as the CLI asked for it (normalised) and the port. */
export function endpointKey(host: string, port: number): string {
  return `${normalizeHost(host)}:${port}`;
}

/** A host as the proxy compares it: no brackets, lowercase, no trailing dot. */
export function normalizeHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1').toLowerCase().replace(/\.$/, '');
}
