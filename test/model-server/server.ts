// Moved to host/testing/scripted-model/server.ts: the scripted model server is a public testing tool
// (harness-bridge/testing, `harness-bridge model-server`). This path stays for the tests and captures.
export * from '../../host/testing/scripted-model/server.ts';
