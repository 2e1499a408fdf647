// zod mirror of HarnessV1StreamPart, used to validate translator output and
// recordings. Its inferred type is checked against the declaration in
// test/protocol/stream-part.test.ts (both directions of assignability).
import * as z from 'zod';

const jsonValue: z.ZodType<import('@ai-sdk/provider').JSONValue> = z.lazy(() =>
  z.union([z.null(), z.string(), z.number(), z.boolean(), z.array(jsonValue), z.record(z.string(), jsonValue.optional())]),
);
const metadata = z.record(z.string(), z.record(z.string(), jsonValue)).optional();
const providerMetadata = z.record(z.string(), z.record(z.string(), jsonValue.optional())).optional();

const warning = z.discriminatedUnion('type', [
  z.object({ type: z.literal('unsupported-setting'), setting: z.string(), details: z.string().optional() }),
  z.object({ type: z.literal('unsupported-tool'), tool: z.string(), details: z.string().optional() }),
  z.object({ type: z.literal('other'), message: z.string() }),
]);

// LanguageModelV4 declares `raw: string | undefined` and token counts as
// `number | undefined` under required keys; JSON drops undefined keys, so the
// schemas accept a missing key and the transform puts it back.
export const finishReasonSchema = z
  .object({
    unified: z.enum(['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other']),
    raw: z.string().optional(),
  })
  .transform(({ unified, raw }) => ({ unified, raw }));

const count = z.number().optional();
export const usageSchema = z
  .object({
    inputTokens: z.object({ total: count, noCache: count, cacheRead: count, cacheWrite: count }),
    outputTokens: z.object({ total: count, text: count, reasoning: count }),
    raw: z.record(z.string(), jsonValue.optional()).optional(),
  })
  .transform(({ inputTokens: i, outputTokens: o, raw }) => ({
    inputTokens: { total: i.total, noCache: i.noCache, cacheRead: i.cacheRead, cacheWrite: i.cacheWrite },
    outputTokens: { total: o.total, text: o.text, reasoning: o.reasoning },
    ...(raw === undefined ? {} : { raw }),
  }));

const idPart = <T extends string>(type: T) => z.object({ type: z.literal(type), id: z.string(), harnessMetadata: metadata });
const deltaPart = <T extends string>(type: T) =>
  z.object({ type: z.literal(type), id: z.string(), delta: z.string(), harnessMetadata: metadata });

export const streamPartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stream-start'), warnings: z.array(warning).readonly().optional(), modelId: z.string().optional() }),
  idPart('text-start'),
  deltaPart('text-delta'),
  idPart('text-end'),
  idPart('reasoning-start'),
  deltaPart('reasoning-delta'),
  idPart('reasoning-end'),
  z.object({
    type: z.literal('tool-input-start'),
    id: z.string(),
    toolName: z.string(),
    providerMetadata,
    providerExecuted: z.boolean().optional(),
    dynamic: z.boolean().optional(),
    title: z.string().optional(),
  }),
  z.object({ type: z.literal('tool-input-delta'), id: z.string(), delta: z.string(), providerMetadata }),
  z.object({ type: z.literal('tool-input-end'), id: z.string(), providerMetadata }),
  z.object({
    type: z.literal('tool-call'),
    toolCallId: z.string(),
    toolName: z.string(),
    input: z.string(),
    providerExecuted: z.boolean().optional(),
    dynamic: z.boolean().optional(),
    providerMetadata,
    nativeName: z.string().optional(),
    stepToolCallCount: z.number().int().nonnegative().optional(),
  }),
  z.object({
    type: z.literal('tool-approval-request'),
    approvalId: z.string(),
    toolCallId: z.string(),
    providerMetadata,
  }),
  z.object({
    type: z.literal('tool-result'),
    toolCallId: z.string(),
    toolName: z.string(),
    result: z.union([z.string(), z.number(), z.boolean(), z.array(jsonValue).readonly(), z.record(z.string(), jsonValue.optional())]),
    isError: z.boolean().optional(),
    preliminary: z.boolean().optional(),
    dynamic: z.boolean().optional(),
    providerMetadata,
  }),
  z.object({ type: z.literal('finish-step'), finishReason: finishReasonSchema, usage: usageSchema, harnessMetadata: metadata }),
  z.object({ type: z.literal('finish'), finishReason: finishReasonSchema, totalUsage: usageSchema, harnessMetadata: metadata }),
  z.object({
    type: z.literal('file-change'),
    event: z.enum(['create', 'modify', 'delete']),
    path: z.string(),
    harnessMetadata: metadata,
  }),
  z.object({
    type: z.literal('compaction'),
    trigger: z.enum(['manual', 'auto']),
    summary: z.string(),
    tokensBefore: z.number().optional(),
    tokensAfter: z.number().optional(),
    harnessMetadata: metadata,
  }),
  z.object({ type: z.literal('error'), error: z.unknown() }),
  z.object({ type: z.literal('raw'), rawValue: z.unknown() }),
]);
