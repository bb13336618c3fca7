/** config.json as it is on disk, for CLI reads that need no lock (a missing or broken file reads as the defaults). */
import { readRegularFileSync } from '../server/protocol/regular-file.ts';
import { configPath, defaultConfig, normalizeConfig, type ConfigData } from '../server/state/config.ts';

/** config.json as it is on disk, without creating or repairing anything (read-only commands). */
export function readConfigSnapshot(dir: string): ConfigData {
  try {
    return normalizeConfig(JSON.parse(readRegularFileSync(configPath(dir))));
  } catch {
    return defaultConfig();
  }
}
