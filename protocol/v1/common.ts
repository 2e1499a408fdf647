// Small schemas shared by several frames.
import * as z from 'zod';

/** Correlates a host request with the bridge's `ack` or `error`. */
export const requestIdSchema = z.string().min(1).max(128);
export const seqSchema = z.number().int().nonnegative();
export const turnIdSchema = z.string().min(1).max(200);
export const callIdSchema = z.string().min(1).max(200);
export const signalNameSchema = z.enum(['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2']);
export type SignalName = z.infer<typeof signalNameSchema>;
