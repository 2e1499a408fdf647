// Host tool calls that came through a keeper's MCP relay (launch `survive`; docs/bridge-internals.md#survive-mcp-relay).
// Such a call outlives its HTTP request: when the request closes (the bridge before this one died,
// or the keeper's connection broke) the call stays pending for the host, and the keeper's re-sent
// request (same relay id) is answered instead of journaling the call again — with the host's
// answer when it comes, or at once when the answer is journaled already. So the host answers a
// call once and the CLI reads that answer once, whichever bridge is up.
import type { ServerResponse } from 'node:http';
import type { RecordDraft, ToolResultFrame } from '../../protocol/v1/index.ts';
import type { Logger } from '../logger.ts';
import type { PendingCall } from '../server/server-seams.ts';
import type { RpcId } from './json-rpc.ts';

/** A relayed call of an adopted turn, as the journal has it: `result` when its tool-result is journaled. */
export type AdoptedCall = { callId: string; relay: string; turnId: string; result?: { output: unknown; isError: boolean } };

type Waiter = { rpcId: RpcId; res: ServerResponse; keepalive: NodeJS.Timeout };
type Call = { callId: string; relay: string; turnId: string; waiter: Waiter | null; result: { output: unknown; isError: boolean } | null };

export type RelayedCallsOptions = {
  record(draft: RecordDraft): number | null;
  flush(): Promise<void>;
  log: Logger;
  keepaliveIntervalMs: number;
  reply(res: ServerResponse, body: unknown): void;
  result(id: RpcId, output: unknown, isError: boolean): unknown;
  failed(id: RpcId, message: string): unknown;
};

/** Answered calls whose answer no re-sent request collected yet, kept at most this many (oldest go first). */
const maxUncollected = 256;

export class RelayedCalls {
  readonly #options: RelayedCallsOptions;
  readonly #byRelay = new Map<string, Call>();

  constructor(options: RelayedCallsOptions) {
    this.#options = options;
  }

  /** Calls still waiting for the host. */
  get waitingCount(): number {
    let count = 0;
    for (const call of this.#byRelay.values()) if (call.result === null) count += 1;
    return count;
  }

  /** A relayed call just journaled: it waits for the host, answered to `res` (or to a re-sent request). */
  start(call: { callId: string; relay: string; turnId: string }, rpcId: RpcId, res: ServerResponse, calls: Map<string, PendingCall>): void {
    const entry: Call = { ...call, waiter: null, result: null };
    this.#byRelay.set(call.relay, entry);
    this.#attach(entry, rpcId, res);
    calls.set(call.callId, this.#pending(entry));
  }

  /** A relayed call of an adopted turn: unanswered, it waits for the host; answered, for the keeper's re-send. */
  adopt(call: AdoptedCall, calls: Map<string, PendingCall>): void {
    const entry: Call = { callId: call.callId, relay: call.relay, turnId: call.turnId, waiter: null, result: call.result ?? null };
    this.#byRelay.set(call.relay, entry);
    if (entry.result === null) calls.set(call.callId, this.#pending(entry));
    this.#options.log.info({ callId: call.callId, relay: call.relay, answered: entry.result !== null }, 'mcp: adopted a relayed tool call');
  }

  /** The keeper re-sent `relay`'s request: true when that call is known (answered now, or when the host answers). */
  answer(relay: string, rpcId: RpcId, res: ServerResponse): boolean {
    const call = this.#byRelay.get(relay);
    if (call === undefined) return false;
    if (call.waiter !== null) this.#detach(call, true); // a stale request for the same call: the newest is the keeper's
    this.#attach(call, rpcId, res);
    if (call.result !== null) this.#deliver(call);
    return true;
  }

  /** The bridge stops: open requests are closed, not answered, so each keeper holds its request for the next bridge. */
  close(): void {
    for (const call of this.#byRelay.values()) if (call.waiter !== null) this.#detach(call, true);
  }

  #pending(call: Call): PendingCall {
    return { kind: 'tool-call', answer: (frame) => this.#answered(call, frame) };
  }

  #answered(call: Call, frame: ToolResultFrame): void {
    const isError = frame.isError ?? false;
    this.#options.record({ kind: 'tool-result', turnId: call.turnId, data: { callId: call.callId, output: frame.output, isError } });
    call.result = { output: frame.output, isError };
    this.#options.log.info({ callId: call.callId, isError }, 'mcp: relayed tool call answered');
    this.#options.flush().then(
      () => this.#deliver(call),
      (error: unknown) => {
        this.#options.log.error({ err: error, callId: call.callId }, 'mcp: journal flush failed before answering');
        const waiter = call.waiter;
        if (waiter === null) return;
        this.#detach(call, false);
        this.#options.reply(waiter.res, this.#options.failed(waiter.rpcId, 'the bridge could not journal the result'));
      },
    );
    this.#trim();
  }

  /** The journaled answer to the request waiting now; with none waiting, it stays for the keeper's re-send. */
  #deliver(call: Call): void {
    const waiter = call.waiter;
    if (waiter === null || call.result === null) return;
    this.#detach(call, false);
    this.#byRelay.delete(call.relay);
    this.#options.reply(waiter.res, this.#options.result(waiter.rpcId, call.result.output, call.result.isError));
  }

  #attach(call: Call, rpcId: RpcId, res: ServerResponse): void {
    const keepalive = setInterval(() => {
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.write(' '); // leading JSON whitespace: resets the client's idle timer, the body still parses
    }, this.#options.keepaliveIntervalMs);
    keepalive.unref();
    const waiter: Waiter = { rpcId, res, keepalive };
    call.waiter = waiter;
    res.on('close', () => {
      if (call.waiter !== waiter) return;
      clearInterval(keepalive);
      call.waiter = null; // the call stays: the keeper sends the request again
      this.#options.log.info({ callId: call.callId }, 'mcp: relayed request closed; the call waits for its re-send');
    });
  }

  #detach(call: Call, destroy: boolean): void {
    const waiter = call.waiter;
    if (waiter === null) return;
    clearInterval(waiter.keepalive);
    call.waiter = null;
    if (destroy) waiter.res.destroy();
  }

  #trim(): void {
    if (this.#byRelay.size <= maxUncollected) return;
    for (const [relay, call] of this.#byRelay) {
      if (this.#byRelay.size <= maxUncollected) break;
      if (call.result !== null && call.waiter === null) this.#byRelay.delete(relay);
    }
  }
}
