// Public surface of the scripted model server used by tests, scripts and demos (its sources:
// host/testing/scripted-model/, documented in its README.md).
export { startModelServer } from './server.ts';
export type { Api, ModelServer, ModelServerOptions, RecordedRequest } from './server.ts';
export { EDIT_NEW, EDIT_OLD, WRITE_CONTENT, parseMarkers, planReply } from './script.ts';
export type { Conversation, Item, Markers, Reply, ToolDef } from './script.ts';
export {
  claudeCodeProfile,
  codexProfile,
  piProfile,
  profileFromBuiltinTools,
  referenceProfiles,
  type CliProfile,
} from '../../host/testing/scripted-model/profiles.ts';
