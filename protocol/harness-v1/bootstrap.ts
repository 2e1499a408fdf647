// HarnessV1Bootstrap: the adapter-owned recipe a sandbox provider can snapshot.
// Our own declaration of the published contract (HarnessV1Bootstrap of the AI
// SDK's @ai-sdk/harness, canary.3 contract), written to match it, not copied.

/** One file the recipe writes; its path should live under `bootstrapDir`. */
export interface HarnessV1BootstrapFile {
  readonly path: string;
  readonly content: string;
}

/** One command, run in order after every file is written; non-zero exit aborts. */
export interface HarnessV1BootstrapCommand {
  readonly command: string;
  readonly workingDirectory?: string;
}

export interface HarnessV1Bootstrap {
  /** Owner adapter id; part of the identity hash. */
  readonly harnessId: string;
  /** Absolute directory the recipe owns; the applied-marker lives directly under it. */
  readonly bootstrapDir: string;
  readonly files: ReadonlyArray<HarnessV1BootstrapFile>;
  readonly commands: ReadonlyArray<HarnessV1BootstrapCommand>;
}
