/**
 * A schema that applies itself without end (an `allOf` leading back to itself, with no step into
 * the data) compiles, and its validator then overflowed the stack on every call: a web page's tool
 * or a plugin's, called by an agent again and again, each call ending in a RangeError the call path
 * reported as an internal error. The first overflow now marks the schema invalid; later calls are
 * answered without running it.
 */
import { expect, test } from 'bun:test';
import { PAGE_TOOL_VALIDATORS } from '../../server/tools/validate.ts';

test('a self-applying schema is reported as invalid, and run once only', () => {
  const schema = { type: 'object', definitions: { a: { allOf: [{ $ref: '#/definitions/a' }] } }, properties: { x: { $ref: '#/definitions/a' } } };
  const first = PAGE_TOOL_VALIDATORS.validate('tab1_loop', schema, { x: {} });
  expect(first).toMatchObject({ path: '', schemaError: true });
  expect(first!.message).toStartWith("the tool's input schema is invalid: ");
  // Answered from what was kept: the same failure, the validator not run again.
  expect(PAGE_TOOL_VALIDATORS.validate('tab1_loop', schema, { x: {} })).toEqual(first);
  expect(PAGE_TOOL_VALIDATORS.problem('tab1_loop', schema)).toBe(first!.message.slice("the tool's input schema is invalid: ".length));
});
