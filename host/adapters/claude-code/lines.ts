// The zod shapes of the Claude Code output the claude-code adapter reads beyond
// the stream-json format the kit reads (host/adapter-kit/stream-json-lines.ts):
// its file tools' `tool_use_result` (test/fixtures/claude-code/README.md).
import { z } from 'zod';

/** Write's and Edit's tool_use_result: the file, and `type: 'create'` for a new one. */
export const fileResult = z.object({ filePath: z.string(), type: z.string().optional() });
