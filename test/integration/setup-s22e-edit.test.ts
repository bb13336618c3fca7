/**
 * The in-place editors behind `opentabs setup <client>`: one member of a JSON / JSONC object, one
 * table of a TOML file. Only our entry's text changes; everything else — comments, trailing
 * commas, indentation, line endings, key order — stays; what does not parse, or what cannot be
 * edited safely, is refused with a message.
 */
import { describe, expect, test } from 'bun:test';
import ts from 'typescript';
import { editJsonMember, JsonEditRefused, JsonSyntaxError, STRICT_JSON, type JsonDialect } from '../../cli/setup/jsonc.ts';
import { editTomlTable, TomlEditRefused } from '../../cli/setup/toml.ts';

const JSONC: JsonDialect = { comments: true, trailingCommas: true };
const E = { type: 'http', url: 'http://127.0.0.1:9515/mcp', headers: { Authorization: 'Bearer x' } };
const set = (text: string, dialect = STRICT_JSON, value: unknown = E, container = ['mcpServers']) => editJsonMember(text, dialect, { container, name: 'opentabs', value });
const del = (text: string, dialect = STRICT_JSON) => editJsonMember(text, dialect, { container: ['mcpServers'], name: 'opentabs', value: undefined });
const jsonc = (text: string): unknown => {
  const r = ts.parseConfigFileTextToJson('x.json', text);
  if (r.error) throw new Error(String(r.error.messageText));
  return r.config;
};

describe('JSON member edits', () => {
  test('into an empty file, {} and { }: a two-space block', () => {
    for (const t of ['', '  \n', '{}', '{ }\n']) {
      const r = set(t);
      expect(r.changed).toBe(true);
      expect(JSON.parse(r.text)).toEqual({ mcpServers: { opentabs: E } });
      expect(r.text).toContain('\n  "mcpServers": {\n    "opentabs": {\n      "type": "http",');
    }
  });

  test('one-line files stay one object: the member is appended after a comma', () => {
    const r = set('{"a":1,"mcpServers":{"b":2}}');
    expect(JSON.parse(r.text)).toEqual({ a: 1, mcpServers: { b: 2, opentabs: E } });
    expect(r.text.startsWith('{"a":1,"mcpServers":{"b":2, "opentabs": {')).toBe(true);
  });

  test('a comment ending the last line stays beside its member; the trailing-comma style is kept', () => {
    const t = '{\n  "mcpServers": {\n    "b": 2 // two\n  }\n}\n';
    const r = set(t, JSONC);
    expect(r.text).toContain('"b": 2, // two\n    "opentabs": {');
    const tc = '{\n  "mcpServers": {\n    "b": 2,\n  },\n}\n';
    const r2 = set(tc, JSONC);
    expect(r2.text).toContain('"b": 2,\n    "opentabs": {');
    expect(r2.text).toMatch(/\n {4}},\n {2}},\n}\n$/);
    expect(jsonc(r2.text)).toEqual({ mcpServers: { b: 2, opentabs: E } });
  });

  test('CRLF files get CRLF lines; tab-indented files get tabs', () => {
    const r = set('{\r\n\t"a": 1\r\n}\r\n');
    expect(r.text).toBe(`{\r\n\t"a": 1,\r\n\t"mcpServers": {\r\n\t\t"opentabs": ${JSON.stringify(E, null, '\t').replace(/\n/g, '\r\n\t\t')}\r\n\t}\r\n}\r\n`);
  });

  test('an existing entry is replaced where it stands; the same entry changes nothing', () => {
    const t = '{\n  "mcpServers": {\n    "opentabs": {"url": "old"},\n    "z": 1\n  }\n}\n';
    const r = set(t);
    expect(r.before).toEqual({ url: 'old' });
    expect(Object.keys((JSON.parse(r.text) as { mcpServers: object }).mcpServers)).toEqual(['opentabs', 'z']);
    const again = set(r.text);
    expect(again.changed).toBe(false);
    expect(again.text).toBe(r.text);
  });

  test('removal: first, middle, last and only member; a comment on our line goes with it', () => {
    const base = (members: string[]) => `{\n  "mcpServers": {\n${members.map((m) => `    ${m}`).join(',\n')}\n  },\n  "k": true\n}\n`;
    const ours = '"opentabs": {"url": "u"}';
    for (const [with_, without] of [
      [base([ours, '"a": 1', '"b": 2']), base(['"a": 1', '"b": 2'])],
      [base(['"a": 1', ours, '"b": 2']), base(['"a": 1', '"b": 2'])],
      [base(['"a": 1', '"b": 2', ours]), base(['"a": 1', '"b": 2'])],
    ]) {
      const r = del(with_!);
      expect(r.text).toBe(without!);
    }
    expect(del(base([ours])).text).toBe('{\n  "mcpServers": {},\n  "k": true\n}\n');
    const commented = '{\n  "mcpServers": {\n    "a": 1, // keep\n    "opentabs": 1, // ours\n  },\n}\n';
    expect(del(commented, JSONC).text).toBe('{\n  "mcpServers": {\n    "a": 1, // keep\n  },\n}\n');
    expect(del('{"x": 1}').changed).toBe(false);
  });

  test('a "__proto__" key is an ordinary key: kept, and nothing leaks to Object.prototype', () => {
    const r = set('{"__proto__": {"polluted": true}, "mcpServers": {}}');
    const parsed = JSON.parse(r.text) as Record<string, unknown>;
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('refused: syntax errors with line and column, dialect, shapes that cannot be edited safely', () => {
    const syntax: Array<[string, JsonDialect, string]> = [
      ['{"a": 1,}', STRICT_JSON, 'a comma before } at line 1, column 8'],
      ['{\n  // c\n}', STRICT_JSON, 'a comment (this file must be plain JSON) at line 2, column 3'],
      ['{"a": [1,]}', STRICT_JSON, 'a comma before ] at line 1, column 9'],
      ['{"a": "x\ny"}', STRICT_JSON, 'a control character in a string at line 1, column 9'],
      ['{"a": 1} x', STRICT_JSON, 'text after the end of the top-level value'],
      ['{ /* open', JSONC, 'an unclosed /* comment'],
      ['{"a" 1}', STRICT_JSON, 'a missing : after a key'],
      ['{"a": 01}', STRICT_JSON, 'a missing comma or }'],
      ['{"a": 1 "b": 2}', STRICT_JSON, 'a missing comma or }'],
      ["{'a': 1}", JSONC, `an unexpected "'" where a "key" belongs`],
    ];
    for (const [text, dialect, message] of syntax) {
      expect(() => set(text, dialect)).toThrow(JsonSyntaxError);
      expect(() => set(text, dialect)).toThrow(message);
    }
    expect(() => set('"x"')).toThrow(new JsonEditRefused('the top level is not an object'));
    expect(() => set('{"mcpServers": 1}')).toThrow(new JsonEditRefused('"mcpServers" is not an object'));
    expect(() => set('{"mcpServers": {}, "mcpServers": {}}')).toThrow('"mcpServers" appears 2 times; keep one and retry');
    expect(() => set('{"mcpServers": {"opentabs": 1, "opentabs": 2}}')).toThrow('"mcpServers.opentabs" appears 2 times');
    // Bounded nesting.
    expect(() => set(`{"a": ${'['.repeat(600)}${']'.repeat(600)}}`)).toThrow('nesting deeper than 512 levels');
  });
});

describe('TOML table edits', () => {
  const C = { url: 'http://127.0.0.1:9515/mcp', http_headers: { Authorization: 'Bearer x' } };
  const TABLE = '[mcp_servers.opentabs]\nurl = "http://127.0.0.1:9515/mcp"\nhttp_headers = { Authorization = "Bearer x" }';

  test('quoted, spaced and commented headers are ours; a header inside a multi-line string is not', () => {
    for (const header of ['[mcp_servers."opentabs"]', "[ mcp_servers . 'opentabs' ]", '[mcp_servers.opentabs] # old']) {
      const r = editTomlTable(`a = 1\n\n${header}\nurl = "old"\n`, 'mcp_servers', 'opentabs', C);
      expect(r.text).toBe(`a = 1\n\n${TABLE}\n`);
    }
    const fake = 'note = """\n[mcp_servers.opentabs]\n"""\n';
    const r = editTomlTable(fake, 'mcp_servers', 'opentabs', C);
    expect(r.text).toBe(`${fake}\n${TABLE}\n`);
    expect(Bun.TOML.parse(r.text)).toEqual({ note: '[mcp_servers.opentabs]\n', mcp_servers: { opentabs: C } });
  });

  test('CRLF stays CRLF; an array of tables after ours is kept', () => {
    const t = '[mcp_servers.opentabs]\r\nurl = "old"\r\n\r\n[[profiles]]\r\nname = "p"\r\n';
    const r = editTomlTable(t, 'mcp_servers', 'opentabs', C);
    expect(r.text).toBe(`${TABLE.replace(/\n/g, '\r\n')}\r\n\r\n[[profiles]]\r\nname = "p"\r\n`);
  });

  test('dotted keys or an inline table for our entry are refused, not duplicated', () => {
    for (const t of ['mcp_servers.opentabs.url = "x"\n', '[mcp_servers]\nopentabs = { url = "x" }\n', '[mcp_servers]\nopentabs.url = "x"\n']) {
      expect(() => editTomlTable(t, 'mcp_servers', 'opentabs', C)).toThrow(TomlEditRefused);
      expect(() => editTomlTable(t, 'mcp_servers', 'opentabs', undefined)).toThrow(TomlEditRefused);
    }
  });

  test('removing the only table leaves an empty file; nothing to remove changes nothing', () => {
    expect(editTomlTable(`${TABLE}\n`, 'mcp_servers', 'opentabs', undefined).text).toBe('');
    const r = editTomlTable('a = 1\n', 'mcp_servers', 'opentabs', undefined);
    expect(r.changed).toBe(false);
  });
});
