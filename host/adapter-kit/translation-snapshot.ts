// What a turn's translation keeps across a suspend (TurnTranslation.snapshot / restore): the translator's
// state and what the slice owes the next one. JSON throughout: it travels in the resume payload.
import type { JSONValue } from '@ai-sdk/provider';
import type { BlockSplitSnapshot } from './block-split.ts';

export type TranslationSnapshot = {
  /** The last record the snapshot includes (the slice's cursor). */
  seq: number;
  adapter: JSONValue;
  toolCalls: Array<[string, { source: 'bridge' | 'cli'; answered: boolean; toolName?: string }]>;
  approvals: Array<[string, { source: 'bridge' | 'cli'; answered: boolean }]>;
  /** The tool-call / approval-request parts still unanswered (as JSON): a restored slice delivers them once more itself. */
  unansweredParts: JSONValue[];
  /** The start parts of the blocks open after `seq` (as JSON): a restored slice re-opens them before their next part. Absent in an earlier version's snapshot: restore() declines it. */
  openBlocks?: JSONValue[];
  /** The tool-input-start parts of tool-input blocks ended by `seq` whose tool-call has not come yet: a restored slice re-announces them before it. */
  inputsAwaitingCall?: JSONValue[];
  /** The CLI's own tool calls without a result yet: a restored slice delivers one before an approval request that names it. */
  cliCalls?: JSONValue[];
  /** The text and reasoning blocks split around parts shown apart (block-split.ts). */
  blockSplit?: BlockSplitSnapshot;
};
