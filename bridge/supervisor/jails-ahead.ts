// What the supervisor knows to make a kept CLI's jail ahead of its spawn (docs/bridge-internals.md#jail-ahead):
// the launch the next kept spawn will likely have (the last kept one on pipes, or the one the host's `expect`
// frame names) and, for a launch about to be jailed, the jail the spare keeper holds for it. The jail itself is
// made by the CliJail (jail/srt.ts) and started by the spare keeper (survive/spare-keeper.ts, jail-ahead.ts).
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import { aheadFits, type AheadClaim, type CliJail } from '../jail/cli-jail.ts';
import { keptLaunch } from '../survive/relay-launch.ts';
import type { MadeAhead, SpareKeepers } from '../survive/spare-keeper.ts';
import { entryKey, type ProcEntry } from './proc-entry.ts';

export class JailsAhead {
  /** The launch the next jail ahead is made for. */
  #next: LaunchSpec | null = null;

  constructor(
    private readonly keepers: SpareKeepers | undefined,
    private readonly jail: CliJail,
    private readonly stopping: () => boolean,
  ) {
    keepers?.aheadBy(() => this.#make());
  }

  /** A kept CLI was spawned for `launch`: the next jail ahead is made for a launch like it. */
  spawned(launch: LaunchSpec): void {
    if (aheadFits(launch)) this.#next = launch;
  }

  /**
   * The host's `expect` (between turns): unless `live` would take that turn itself, the spare keeper starts the
   * jail of a kept launch like it (the session's first CLI, or a long-lived one's respawn).
   */
  expect(launch: LaunchSpec, live: ProcEntry | null): void {
    if (!aheadFits(launch) || this.stopping()) return;
    if (live !== null && !live.proc.exited && live.lifetime === 'session' && launch.lifetime === 'session' && live.key === entryKey(launch)) return;
    this.#next = launch;
    this.keepers?.refill(this.jail.egress !== undefined, true);
  }

  /**
   * For a kept launch about to be jailed: the MCP relay port the spare's jail was made with, and how to claim that
   * jail; after a jail being made (the host's `expect` came just before this turn) is ready, since it is this spawn's wrap already under way.
   */
  async forSpawn(launch: LaunchSpec): Promise<{ relayPort?: number; claim?: AheadClaim }> {
    const keepers = launch.survive === true ? this.keepers : undefined;
    if (keepers === undefined) return {};
    const making = keepers.aheadMaking;
    if (making) await making;
    const relayPort = keepers.aheadRelayPort;
    return { ...(relayPort === undefined ? {} : { relayPort }), claim: (key) => keepers.claim(key) };
  }

  /** A jail for the launch of `#next`, with the MCP relay port it was made with. */
  async #make(): Promise<MadeAhead | undefined> {
    const next = this.#next;
    if (next === null || this.jail.ahead === undefined || this.stopping()) return undefined;
    const { launch: toJail, relay } = await keptLaunch(next, 'ahead');
    const jail = await this.jail.ahead(toJail);
    return jail === undefined ? undefined : { jail, ...(relay ? { relayPort: relay.listenPort } : {}) };
  }
}
