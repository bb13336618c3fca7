/** How to run this CLI again as a child process (background server, `mcp` auto-start). */
import { join } from 'node:path';

/** True inside the single-file executable built by `npm run compile`. */
export function isCompiled(): boolean {
  return import.meta.url.includes('$bunfs') || import.meta.dir.startsWith('/$bunfs') || import.meta.dir.includes('~BUN');
}

/** argv prefix that runs `opentabs` (the binary itself, or Bun + cli/main.ts). */
export function selfCommand(): string[] {
  if (isCompiled()) return [process.execPath];
  return [process.execPath, join(import.meta.dir, 'main.ts')];
}
