/**
 * server.log rotates to server.log.1 at 5 MB. A folder another program put at server.log.1 made
 * every rotation fail, and with it every line after the log was full: lost without a trace in the
 * log. The lines now go on being appended to server.log, with one line on stderr naming the
 * folder, as audit.log does with a folder at audit.log.1.
 */
import { afterAll, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerLog } from '../../server/state/server-log.ts';

const dir = mkdtempSync(join(tmpdir(), 'opentabs-s21b-serverlog-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a folder at server.log.1: lines past the rotation size are still written', () => {
  const path = join(dir, 'server.log');
  writeFileSync(path, '');
  truncateSync(path, 5 * 1024 * 1024);
  mkdirSync(`${path}.1`);
  const log = new ServerLog(path);
  log.info('after_full', { n: 1 });
  log.info('after_full', { n: 2 });
  expect(log.lastError).toBeNull();
  expect(statSync(`${path}.1`).isDirectory()).toBe(true);
  const tail = readFileSync(path, 'utf8').slice(5 * 1024 * 1024);
  expect(tail.split('\n').filter((l) => l.includes('"after_full"'))).toHaveLength(2);
});

test('without a folder there, server.log rotates as before', () => {
  const sub = join(dir, 'plain');
  mkdirSync(sub);
  const path = join(sub, 'server.log');
  writeFileSync(path, '');
  truncateSync(path, 5 * 1024 * 1024);
  const log = new ServerLog(path);
  log.info('rotated', {});
  expect(statSync(`${path}.1`).size).toBe(5 * 1024 * 1024);
  expect(readFileSync(path, 'utf8')).toContain('"rotated"');
});
