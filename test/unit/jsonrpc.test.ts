/** server/protocol/jsonrpc.ts: frame classification (never throws) and the frame builders. */
import { describe, expect, test } from 'bun:test';
import { error, notification, parseFrame, request, result, RpcErrorCode } from '../../server/protocol/jsonrpc.ts';

describe('parseFrame', () => {
  test('a request, a notification and both kinds of response', () => {
    expect(parseFrame(request(7, 'tool.dispatch', { a: 1 }))).toEqual({ kind: 'request', msg: { jsonrpc: '2.0', id: 7, method: 'tool.dispatch', params: { a: 1 } } });
    expect(parseFrame(notification('ping', {})).kind).toBe('notification');
    const ok = parseFrame(result('x1', { tabs: [] }));
    expect(ok.kind).toBe('response');
    expect(ok.kind === 'response' && 'result' in ok.msg && ok.msg.result).toEqual({ tabs: [] });
    const bad = parseFrame(error('x2', RpcErrorCode.ToolError, 'boom', { code: 'tab_closed' }));
    expect(bad.kind === 'response' && 'error' in bad.msg && bad.msg.error).toEqual({ code: RpcErrorCode.ToolError, message: 'boom', data: { code: 'tab_closed' } });
  });

  test('a null id makes a notification, not a request', () => {
    expect(parseFrame('{"jsonrpc":"2.0","id":null,"method":"ping"}').kind).toBe('notification');
  });

  test('malformed JSON is a parse error without an id', () => {
    expect(parseFrame('{not json')).toEqual({ kind: 'invalid', id: null, error: { code: RpcErrorCode.ParseError, message: expect.stringContaining('not valid JSON') } });
  });

  test('a bad envelope is an invalid request that keeps a readable id', () => {
    const r = parseFrame('{"jsonrpc":"1.0","id":"a9","method":"ping"}');
    expect(r.kind).toBe('invalid');
    expect(r.kind === 'invalid' && r.id).toBe('a9');
    expect(r.kind === 'invalid' && r.error.code).toBe(RpcErrorCode.InvalidRequest);
  });

  test('arrays, strings, numbers and null are not JSON-RPC objects', () => {
    for (const raw of ['[]', '"x"', '42', 'null', '[{"jsonrpc":"2.0","method":"ping"}]']) {
      const r = parseFrame(raw);
      expect(r.kind).toBe('invalid');
      expect(r.kind === 'invalid' && r.error.message).toContain('expected a JSON object');
    }
  });

  test('an object with neither method nor result/error is invalid', () => {
    const r = parseFrame('{"jsonrpc":"2.0","id":3}');
    expect(r.kind === 'invalid' && r.id).toBe(3);
  });
});

describe('frame builders', () => {
  test('result(undefined) sends null, as JSON-RPC requires a result member', () => {
    expect(JSON.parse(result(1, undefined))).toEqual({ jsonrpc: '2.0', id: 1, result: null });
  });
  test('error() omits data when there is none', () => {
    expect(JSON.parse(error(null, RpcErrorCode.InvalidRequest, 'nope'))).toEqual({ jsonrpc: '2.0', id: null, error: { code: RpcErrorCode.InvalidRequest, message: 'nope' } });
  });
});
