/**
 * What an unknown tool name probably meant (server/tools/suggest.ts): the names other browser MCP
 * servers use, typos, a plugin tool without its prefix, a plugin that is not loaded.
 */
import { expect, test } from 'bun:test';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { closeToolNames, suggestTools } from '../../server/tools/suggest.ts';

const tools = [...BROWSER_TOOLS.map((t) => ({ name: t.name, plugin: 'browser' })), { name: 'notes_list_notes', plugin: 'notes' }, { name: 'notes_get_note', plugin: 'notes' }];

test('names other browser MCP servers use lead to ours', () => {
  expect(closeToolNames('browser_click', tools)).toEqual(['browser_click_at', 'browser_click_element']);
  expect(closeToolNames('browser_take_screenshot', tools)).toEqual(['browser_screenshot_tab']);
  expect(closeToolNames('browser_navigate', tools)).toEqual(['browser_navigate_tab']);
  expect(closeToolNames('browser_type', tools)).toEqual(['browser_type_text']);
});

test('a typo is a few edits away', () => {
  expect(closeToolNames('browser_snapshto', tools)).toEqual(['browser_snapshot']);
  expect(suggestTools('notes_list_note', tools)).toBe(' Did you mean `notes_list_notes`?');
});

test("a plugin tool without its prefix, a plugin's unknown tool, a plugin not loaded, a broken one", () => {
  expect(suggestTools('get_note', tools)).toContain('`notes_get_note`');
  expect(suggestTools('notes_delete_everything', tools)).toContain('Plugin notes has 2 tools: notes_list_notes, notes_get_note');
  expect(suggestTools('shop_list_orders', tools)).toContain('No loaded plugin is named "shop" (loaded: notes;');
  expect(suggestTools('shop_list_orders', tools, [{ name: 'shop', path: '/p/shop', error: 'dist/tools.json is missing' }])).toContain('Plugin shop failed to load from /p/shop');
});

test('nothing said when nothing fits, or too much would', () => {
  expect(suggestTools('browser_teleport', tools)).toBe('');
  expect(closeToolNames('zzz', tools)).toEqual([]);
  // "cookies" is a word of several tools; more than 3 equally good guesses are not guesses.
  const four = ['x_cookie_one', 'x_cookie_two', 'x_cookie_three', 'x_cookie_four'].map((name) => ({ name }));
  expect(closeToolNames('x_cookie_jar_thing', four)).toEqual([]);
  expect(closeToolNames('x_cookie_jar_thing', four.slice(0, 3))).toEqual(['x_cookie_one', 'x_cookie_three', 'x_cookie_two']);
});
