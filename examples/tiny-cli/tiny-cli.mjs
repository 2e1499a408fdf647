#!/usr/bin/env node
// tiny-cli: the smallest coding-agent-like CLI, written for the adapter tutorial
// (docs/writing-an-adapter.md#tutorial). No dependencies, Node 20+.
// stdin, one JSON line each: {"type":"prompt","text":T} runs a turn against an
// OpenAI Chat Completions endpoint ($TINY_BASE_URL, $TINY_API_KEY, $TINY_MODEL),
// streamed; {"type":"interrupt"} cuts the running turn short.
// stdout, one JSON line each: {"type":"start","thread":ID,"model":M} when a turn
// starts, {"type":"delta","text":T} per streamed chunk, and at the turn's end
// {"type":"done","reason":"stop"|"interrupted"|"error","usage"?:U,"error"?:E}.
// The conversation is kept in .tiny-cli/<thread>.json in the cwd; `--resume ID`
// continues it. Honours $HTTP_PROXY for http:// endpoints (a sandbox's way out).
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createInterface } from 'node:readline';

const resume = process.argv.indexOf('--resume');
const thread = resume > 0 ? process.argv[resume + 1] : randomUUID();
const file = `.tiny-cli/${thread}.json`;
let messages = [];
try {
  messages = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  // a new thread
}
const model = process.env.TINY_MODEL ?? 'tiny-model';
const print = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
let running = null;

function post(url, body, onData) {
  const target = new URL(url);
  const proxy = process.env.HTTP_PROXY ?? process.env.http_proxy;
  const via = proxy && target.protocol === 'http:' ? new URL(proxy) : target;
  return new Promise((resolve, reject) => {
    const req = request(
      { host: via.hostname, port: via.port, method: 'POST', path: via === target ? target.pathname : target.href,
        headers: { host: target.host, 'content-type': 'application/json', authorization: `Bearer ${process.env.TINY_API_KEY ?? ''}` } },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
        res.setEncoding('utf8').on('data', onData).on('end', resolve).on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
    running = { abort: () => req.destroy(new Error('interrupted')) };
  });
}

async function turn(text) {
  print({ type: 'start', thread, model });
  messages.push({ role: 'user', content: text });
  let reply = '';
  let usage;
  let pending = '';
  try {
    await post(`${process.env.TINY_BASE_URL}/chat/completions`, { model, messages, stream: true, stream_options: { include_usage: true } }, (chunk) => {
      pending += chunk;
      const events = pending.split('\n');
      pending = events.pop();
      for (const event of events) {
        if (!event.startsWith('data: {')) continue;
        const data = JSON.parse(event.slice(6));
        const delta = data.choices?.[0]?.delta?.content;
        if (delta) print({ type: 'delta', text: delta });
        reply += delta ?? '';
        usage = data.usage ?? usage;
      }
    });
    messages.push({ role: 'assistant', content: reply });
    print({ type: 'done', reason: 'stop', ...(usage ? { usage } : {}) });
  } catch (error) {
    if (reply) messages.push({ role: 'assistant', content: reply });
    print(error.message === 'interrupted' ? { type: 'done', reason: 'interrupted' } : { type: 'done', reason: 'error', error: error.message });
  }
  running = null;
  mkdirSync('.tiny-cli', { recursive: true });
  writeFileSync(file, JSON.stringify(messages));
}

let queue = Promise.resolve();
for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.type === 'interrupt') running?.abort();
  else if (message.type === 'prompt') queue = queue.then(() => turn(message.text));
}
await queue;
