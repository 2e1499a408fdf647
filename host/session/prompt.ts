// The prompt as text: what a turn sends the CLI for a HarnessV1Prompt (a
// string, or a message whose text parts are joined by newlines; other parts
// carry no text for a CLI's stdin).
import type { HarnessV1Prompt } from '../../protocol/harness-v1/session.ts';

export function promptText(prompt: HarnessV1Prompt): string {
  if (typeof prompt === 'string') return prompt;
  const content = prompt.content;
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}
