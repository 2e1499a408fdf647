// Moved to host/testing/scripted-model/sse.ts: the demo (harness-bridge demo) serves the scripted
// model too, so it is product code. This path stays for the model server and the tests.
export * from '../../host/testing/scripted-model/sse.ts';
