// The responder's pieces on a real local sandbox: fs requests confined to the project dir (a
// relative path, `..`, an absolute path outside and a symlink leading out are refused; inside,
// read and write work, missing parents included), and the JSON-RPC request/answer keys.
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfinementError, jsonRpc, sandboxResponderIo, type ResponderIo } from '../../../host/adapter-kit/responder.ts';
import { createLocalSandboxProvider } from '../../../host/sandbox/local/provider.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';

let root: string;
let project: string;
let io: ResponderIo;
let destroy: () => PromiseLike<void>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hb-responder-'));
  const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
  const sandbox = await provider.createSession();
  destroy = () => sandbox.destroy!();
  project = join(root, 'project');
  await mkdir(project, { recursive: true });
  await writeFile(join(root, 'secret.txt'), 'outside');
  await writeFile(join(project, 'in.txt'), 'inside');
  await symlink(join(root, 'secret.txt'), join(project, 'leak.txt'));
  await symlink(root, join(project, 'up'));
  io = sandboxResponderIo(sandbox.restricted(), project, 'allow-all');
});
afterAll(async () => {
  await destroy?.();
  await rm(root, { recursive: true, force: true });
});

describe('sandboxResponderIo: fs confined to the project dir', () => {
  it('reads and writes inside', async () => {
    expect(await io.readTextFile(join(project, 'in.txt'))).toBe('inside');
    await io.writeTextFile(join(project, 'new/dir/out.txt'), 'written');
    expect(await readFile(join(project, 'new/dir/out.txt'), 'utf8')).toBe('written');
  });

  it('refuses relative paths, .., outside paths and symlinks leading out (read and write)', async () => {
    const refused = ['in.txt', join(project, '../secret.txt'), join(root, 'secret.txt'), join(project, 'leak.txt'), join(project, 'up/secret.txt'), project];
    let count = 0;
    for (const path of refused) {
      await expect(io.readTextFile(path)).rejects.toBeInstanceOf(ConfinementError);
      await expect(io.writeTextFile(path, 'pwned')).rejects.toBeInstanceOf(ConfinementError);
      count += 2;
    }
    expect(await readFile(join(root, 'secret.txt'), 'utf8')).toBe('outside');
    console.log(`[figures] responder confinement: ${count} of ${count} out-of-project fs requests refused, 0 writes outside`);
  });
});

describe('jsonRpc request/answer keys', () => {
  const rec = (kind: 'stdout' | 'stdin', text: string): JournalRecord => ({ seq: 1, turnId: 't', ts: 0, kind, data: { text } }) as JournalRecord;
  it('a request and its answer share the key, string and number ids kept apart', () => {
    const req = jsonRpc.request(rec('stdout', '{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"path":"/x"}}'))!;
    expect(req).toEqual({ key: 'rpc:7', method: 'fs/read_text_file', params: { path: '/x' } });
    const answer = jsonRpc.result(req.key, { content: 'x' });
    expect(jsonRpc.answered(rec('stdin', answer))).toBe('rpc:7');
    expect(jsonRpc.request(rec('stdout', '{"id":"7","method":"m"}'))!.key).toBe('rpc:"7"');
    expect(jsonRpc.error('rpc:"7"', -32000, 'no')).toBe('{"jsonrpc":"2.0","id":"7","error":{"code":-32000,"message":"no"}}\n');
    expect(jsonRpc.request(rec('stdout', '{"method":"session/update","params":{}}'))).toBeUndefined(); // a notification
  });
});
