// The network policy for jailed CLIs (issue 21; docs/security.md#network-policy) as it travels
// from a sandbox session to the bridges in it: a file the sandbox writes (the local provider's
// setNetworkPolicy, host/sandbox/local/network-policy.ts) and each bridge reads, watches and
// acknowledges. The policy is the HarnessV1NetworkPolicy of the sandbox contract; the bridge's
// egress proxy (bridge/jail/egress-proxy.ts) enforces it for the CLI and everything it spawns.
// Validated on receipt at both ends, like every frame.
import * as z from 'zod';

/** `example.com`, `*.example.com`, `localhost`, `model.test`: lower-case DNS names, one leading `*.` wildcard at most. */
export const hostPatternSchema = z
  .string()
  .min(1)
  .max(253)
  .transform((value) => value.toLowerCase().replace(/\.$/, ''))
  .refine((value) => /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(value), {
    message: 'a host name, or *. and a host name',
  });

const ipv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** An IPv4 or IPv6 range: `10.0.0.0/8`, `169.254.169.254/32`, `fd00::/8`; a bare address is its /32 or /128. */
export const cidrSchema = z
  .string()
  .min(2)
  .max(64)
  .refine(
    (value) => {
      const [address, bits, extra] = value.split('/');
      if (extra !== undefined || address === undefined) return false;
      const v4 = ipv4.test(address);
      const v6 = !v4 && /^[0-9a-fA-F:.]+$/.test(address) && address.includes(':');
      if (!v4 && !v6) return false;
      if (bits === undefined) return true;
      return /^\d{1,3}$/.test(bits) && Number(bits) <= (v4 ? 32 : 128);
    },
    { message: 'an IPv4 or IPv6 address with an optional /prefix' },
  );

const maxEntries = 1000;

export const networkPolicySchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('allow-all') }),
  z.object({ mode: z.literal('deny-all') }),
  z
    .object({
      mode: z.literal('custom'),
      allowedHosts: z.array(hostPatternSchema).max(maxEntries).optional(),
      allowedCIDRs: z.array(cidrSchema).max(maxEntries).optional(),
      /** Wins over both allow lists, for names as for addresses (e.g. cloud metadata, 169.254.169.254/32). */
      deniedCIDRs: z.array(cidrSchema).max(maxEntries).optional(),
    })
    .refine((p) => p.allowedHosts !== undefined || p.allowedCIDRs !== undefined, { message: 'a custom policy names allowedHosts or allowedCIDRs' }),
]);
export type NetworkPolicy = z.infer<typeof networkPolicySchema>;

/** `<dir>/policy.json`: the policy in force, and a revision that changes with every write. */
export const networkPolicyFileSchema = z.object({
  format: z.literal(1),
  revision: z.string().min(1).max(64),
  policy: networkPolicySchema,
});
export type NetworkPolicyFile = z.infer<typeof networkPolicyFileSchema>;

/**
 * `<dir>/bridges/<bridgeId>.json`: a live bridge reading this policy, and what it applied. A
 * writer of the policy waits until every live bridge has applied its revision; `enforced` false
 * means the bridge's isolation cannot enforce a policy (no network namespace) and spawns no CLI
 * under any policy but allow-all.
 */
export const networkPolicyAckSchema = z.object({
  pid: z.number().int().positive(),
  /** /proc start time of the pid (a reused pid is not this bridge). */
  startTime: z.string().optional(),
  revision: z.string().nullable(),
  enforced: z.boolean(),
  mode: z.string(),
});
export type NetworkPolicyAck = z.infer<typeof networkPolicyAckSchema>;

export const NETWORK_POLICY_FILES = { policy: 'policy.json', bridges: 'bridges' } as const;
