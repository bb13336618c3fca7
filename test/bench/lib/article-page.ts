/**
 * A deterministic, web-app-shaped page for the context-cost figures: head metadata, inline CSS,
 * a hydration-state script, navigation, an article, a data table, a form and a footer — the mix
 * that makes real pages' HTML much larger than their text. (The fixture pages are a few hundred
 * bytes, too small to compare page-reading tools against HTML.)
 */
const WORDS = 'the server forwards each call to the extension which runs it in the page with the user session and returns a compact result to the agent'.split(' ');

function sentence(seed: number, len: number): string {
  const out: string[] = [];
  for (let i = 0; i < len; i++) out.push(WORDS[(seed * 7 + i * 13) % WORDS.length]!);
  const s = out.join(' ');
  return s[0]!.toUpperCase() + s.slice(1) + '.';
}

export function articlePageHtml(): string {
  const css = Array.from({ length: 60 }, (_, i) => `.c${i}{margin:${i % 8}px;padding:${i % 5}px ${i % 7}px;color:#${(0x224466 + i * 997).toString(16).slice(-6)};font:${12 + (i % 6)}px/1.4 system-ui}`).join('\n');
  const state = JSON.stringify({ user: { id: 42, name: 'Alice Liddell', roles: ['admin', 'editor'] }, items: Array.from({ length: 80 }, (_, i) => ({ id: i + 1, title: sentence(i, 6), tags: ['a', 'b', 'c'].slice(0, (i % 3) + 1), updatedAt: new Date(Date.UTC(2026, 0, 1 + i)).toISOString() })) });
  const nav = Array.from({ length: 30 }, (_, i) => `<li class="c${i % 60} nav-item"><a class="nav-link" href="/section/${i}" data-track="nav-${i}">Section ${i + 1}</a></li>`).join('');
  const paras = Array.from({ length: 14 }, (_, i) => `<p class="c${(i * 3) % 60}" data-para="${i}">${sentence(i, 18)} ${sentence(i + 1, 14)}</p>`).join('\n');
  const rows = Array.from({ length: 30 }, (_, r) => `<tr class="row c${r % 60}">${Array.from({ length: 5 }, (_, c) => `<td class="cell col-${c}">${c === 0 ? `#${r + 1}` : WORDS[(r * 5 + c) % WORDS.length]}</td>`).join('')}</tr>`).join('\n');
  const footer = Array.from({ length: 20 }, (_, i) => `<a class="footer-link c${i}" href="/legal/${i}">Footer link ${i + 1}</a>`).join(' · ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Bench article — OpenTabs</title><meta name="description" content="A web-app-shaped page for the context-cost bench">
<meta property="og:title" content="Bench article"><link rel="icon" href="data:,">
<style>${css}</style></head>
<body><div id="root" class="app-shell"><header class="top c1"><a class="logo" href="/">Bench App</a>
<nav aria-label="Main"><ul class="nav">${nav}</ul></nav><button class="c2" aria-label="Open menu">Menu</button></header>
<main class="content c3"><article><h1>How a tool call travels</h1>
${paras}
<h2>Recent items</h2>
<table class="data"><thead><tr><th>#</th><th>Name</th><th>Owner</th><th>Status</th><th>Notes</th></tr></thead><tbody>
${rows}
</tbody></table>
<h2>Leave a comment</h2>
<form class="c4" action="/comment" method="post"><label>Name <input name="name" type="text" placeholder="Your name"></label>
<label>Topic <select name="topic"><option value="a">Tools</option><option value="b">Plugins</option></select></label>
<label>Comment <textarea name="body" rows="4"></textarea></label><label><input type="checkbox" name="subscribe"> Subscribe</label>
<button type="submit">Send</button></form></article></main>
<footer class="c5">${footer}</footer></div>
<script id="__STATE__" type="application/json">${state}</script>
</body></html>`;
}
