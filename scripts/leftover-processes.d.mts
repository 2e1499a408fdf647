// Types for leftover-processes.mjs, so TypeScript callers (test/process-marks-setup.ts) type-check.
export type MarkedProcess = { pid: number; cmdline: string; mark: string };
export declare const PROCESS_MARK_ENV: 'HARNESS_BRIDGE_PROCESS_MARK';
export declare function markedProcesses(mark?: string | null): MarkedProcess[];
export declare function leftoverProcesses(mark: string | null | undefined, options?: { polls?: number; everyMs?: number; exclude?: number[] }): Promise<MarkedProcess[]>;
export declare function killAll(processes: ReadonlyArray<MarkedProcess>): void;
