/** config.json as it is on disk, for CLI reads that need no lock (a missing or broken file reads as the defaults). */
import { readFileSync } from 'node:fs';
import { configPath, defaultConfig, normalizeConfig, type ConfigData } from '../server/state/config.ts';

/** config.json as it is on disk, without creating or repairing anything (read-only commands). */
export function readConfigSnapshot(dir: string): ConfigData {
  try {
    return normalizeConfig(JSON.parse(readFileSync(configPath(dir), 'utf8')));
  } catch {
    return defaultConfig();
  }
}
