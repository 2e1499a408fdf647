// What the jail helper uses of sandbox-runtime (srt): its SandboxManager, however it was loaded (srt-bundle.ts).
export type SrtModule = {
  SandboxManager: {
    initialize(config: unknown): Promise<void>;
    wrapWithSandbox(command: string, binShell?: string, customConfig?: unknown): Promise<string>;
    cleanupAfterCommand(): void;
    getLinuxHttpSocketPath?(): string | undefined;
    getLinuxSocksSocketPath?(): string | undefined;
  };
};
