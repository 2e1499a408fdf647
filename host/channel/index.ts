// host/channel: the WebSocket client to one bridge, and this folder's one
// entry (files outside host/channel/ import from here). createBridgeChannel
// connects, attaches at a cursor, delivers the journal's records in order and
// reconnects across drops; a bridge that looks dead (its port refuses) goes to
// the caller's `revive` hook first (revive.ts). channel.ts holds the state
// machine, its parts sit beside it.
//
// Guarantees:
// - onRecords sees each seq at most once and in strictly increasing,
//   contiguous order starting at cursor+1 (duplicates dropped; a gap closes the
//   socket and re-attaches from the cursor).
// - Nothing is delivered after a terminal error or close().
// - Requests: see REQUEST_DELIVERY (requests.ts) for what a reconnect does to
//   each frame type.
// Not guaranteed: that onRecords sees everything — a terminal error (cursor
// expired, displaced, deadline) ends delivery; `cursor` says how far it got.
export { createBridgeChannel } from './channel.ts';
export type {
  BridgeChannel,
  BridgeChannelOptions,
  ChannelSocket,
  ChannelSocketConstructor,
  ChannelSocketOptions,
  ChannelStatus,
  CreateConnection,
  OpenSocket,
  RecordsInfo,
  RevivedEndpoint,
} from './types.ts';
export { REQUEST_DELIVERY, type ChannelRequest, type ChannelRequestType } from './requests.ts';
export {
  BridgeChannelError,
  ChannelRequestError,
  type BridgeChannelErrorCode,
  type ChannelRequestErrorCode,
} from './errors.ts';
