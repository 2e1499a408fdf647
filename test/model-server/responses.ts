// Moved to host/testing/scripted-model/responses.ts (the scripted model server is a public testing tool).
export * from '../../host/testing/scripted-model/responses.ts';
