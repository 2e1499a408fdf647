// Public surface of the scripted model server used by tests, scripts and demos.
export { startModelServer } from './server.ts';
export type { Api, ModelServer, ModelServerOptions, RecordedRequest } from './server.ts';
export { EDIT_NEW, EDIT_OLD, WRITE_CONTENT, parseMarkers, planReply } from './script.ts';
export type { Conversation, Item, Markers, Reply, ToolDef } from './script.ts';
