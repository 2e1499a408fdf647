// Moved to host/testing/scripted-model/chat.ts (the scripted model server is a public testing tool).
export * from '../../host/testing/scripted-model/chat.ts';
