import { expect, test } from 'bun:test';
import { FULL_INSTRUCTIONS, GATEWAY_INSTRUCTIONS, INSTRUCTIONS_MAX_BYTES } from '../../server/mcp/instructions.ts';

test('initialize instructions stay within their byte budget and keep the untrusted-content rule', () => {
  for (const text of [FULL_INSTRUCTIONS, GATEWAY_INSTRUCTIONS]) {
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(INSTRUCTIONS_MAX_BYTES);
    expect(text).toContain('untrusted');
  }
  expect(FULL_INSTRUCTIONS).toContain('browser_list_tabs');
  expect(GATEWAY_INSTRUCTIONS).toContain('opentabs_list_tools');
  expect(GATEWAY_INSTRUCTIONS).toContain('opentabs_call');
});
