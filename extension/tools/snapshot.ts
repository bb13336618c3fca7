import { childFrames, FRAME_LEVELS_MAX, matchFrames, runInFrame, UNSURE_FRAME_NOTE } from './frames.ts';
import { frameRefusal } from './frame-policy.ts';
import { cutSnapshot, SNAPSHOT_MAX_CHARS } from '../page/snapshot.ts';
import { redactedUrl } from './url-policy.ts';

/**
 * browser_snapshot: the page as compact, Markdown-like plain text an agent can read and act on
 * (snapshotPage in extension/page/snapshot.ts makes it in each document), and the iframes' own
 * snapshots put in place of their lines.
 */
export type PageSnapshot = { url: string; title: string; elements: number; snapshot: string; frameIndex: number; frameDeep: number };

const shortUrl = (url: string) => (url.length > 120 ? `${url.slice(0, 120)}…` : url);

/**
 * In the worker: the top document's snapshot with each iframe's line (the mark snapshotPage put
 * there) replaced by the frame's own snapshot, indented under `iframe Name (url):`, its refs fFeN
 * (F the frameId). A frame whose URL the policy refuses is never scripted: its line says why its
 * content is not shown. Frames are matched to their iframes by matchFrames (frames.ts); an iframe
 * whose frame it cannot tell apart from others says so and shows no frame's content. The whole
 * is held to SNAPSHOT_MAX_CHARS like each document's part, cut at a line's end with a mark.
 */
export async function withFrames(tabId: number, top: { snapshot: string; elements: number }, mark: string, maxDepth: number, interactiveOnly: boolean, topDocumentId?: string): Promise<{ snapshot: string; elements: number }> {
  if (!top.snapshot.includes(mark)) return top;
  const frames = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  let elements = top.elements;
  // Children of the very document each snapshot came from: had the tab (or a frame) navigated
  // since, another page's iframes would be shown inside this one.
  // `behind`: a page above cannot let a user reach these frames (the iframe holding them is behind
  // its open modal dialog, or in [inert]): their controls say (inert) as well.
  const expand = async (text: string, parentFrameId: number, level: number, parentDocumentId: string | undefined, behind: boolean): Promise<string[]> => {
    const lines = text === '' ? [] : text.split('\n');
    const slots = lines.map((line) => {
      const at = line.indexOf(mark);
      if (at < 0) return null;
      try {
        const [index, name, src, deep, inert] = JSON.parse(line.slice(at + mark.length)) as [number, string, string, number, boolean?];
        return { lead: line.slice(0, at), index, name, src, deep, inert: behind || inert === true };
      } catch {
        return null;
      }
    });
    if (!slots.some(Boolean)) return lines;
    const children = childFrames(frames, parentFrameId, parentDocumentId);
    // Which frame is whose iframe is known only once they answered: a frame is told it is behind
    // when every iframe of this document is (the usual case, a modal over the whole page); else each
    // answer's controls are marked here below.
    const allBehind = slots.every((s) => !s || s.inert);
    const answers = level >= FRAME_LEVELS_MAX ? [] : await Promise.all(children.filter((f) => f.documentId && !frameRefusal(f.url)).map(async (f) => {
      const r = await runInFrame(tabId, f, 'snapshotPage', [null, maxDepth, interactiveOnly, `f${f.frameId}`, mark, false, allBehind]);
      return { frame: f, r: r && 'snapshot' in r ? (r as PageSnapshot) : null };
    }));
    const matches = matchFrames(slots, children, answers);
    const out: string[] = [];
    for (const [i, line] of lines.entries()) {
      const slot = slots[i];
      if (!slot) {
        out.push(line);
        continue;
      }
      const head = `${slot.lead}iframe${slot.name ? ` ${slot.name}` : ''}${slot.inert ? ' (inert)' : ''}`;
      const pad = ' '.repeat(slot.lead.length) + '  ';
      const { frame, r, unsure } = matches[i] ?? {};
      let hit = frame && r ? { frame, r } : undefined;
      if (hit && slot.inert && !allBehind) {
        // Read again told it is behind (the refs stay: a document keeps its elements' refs).
        const again = await runInFrame(tabId, hit.frame, 'snapshotPage', [null, maxDepth, interactiveOnly, `f${hit.frame.frameId}`, mark, false, true]);
        hit = again && 'snapshot' in again ? { frame: hit.frame, r: again as PageSnapshot } : undefined;
      }
      if (hit) {
        elements += hit.r.elements;
        const body = await expand(hit.r.snapshot, hit.frame.frameId, level + 1, hit.frame.documentId, slot.inert);
        const url = shortUrl(hit.r.url);
        if (!body.length) out.push(`${head} (${url}): (empty)`);
        else if (body.length === 1 && !/^(- |\d+\. )/.test(body[0]!)) out.push(`${head} (${url}): ${body[0]}`);
        else out.push(`${head} (${url}):`, ...body.map((l) => pad + l));
        continue;
      }
      const url = frame?.url ?? slot.src;
      const why = url ? frameRefusal(url) : null;
      if (why) out.push(`${head} (${redactedUrl(url)}): not shown (tools may not read it: ${why})`);
      else if (level >= FRAME_LEVELS_MAX) out.push(`${head}${url ? ` (${shortUrl(url)})` : ''}: not shown (iframes nested more than ${FRAME_LEVELS_MAX} deep)`);
      else if (unsure) out.push(`${head}${url ? ` (${shortUrl(url)})` : ''}: not shown (${UNSURE_FRAME_NOTE})`);
      else out.push(`${head}${url ? ` (${shortUrl(url)})` : ''}: not shown (its content did not answer: not loaded yet, or its page is busy)`);
    }
    return out;
  };
  const snapshot = (await expand(top.snapshot, 0, 0, topDocumentId, false)).join('\n');
  return { snapshot: snapshot.length > SNAPSHOT_MAX_CHARS ? cutSnapshot(snapshot, SNAPSHOT_MAX_CHARS) : snapshot, elements };
}
