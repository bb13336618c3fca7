/** How to run this CLI again (background server, `mcp` auto-start, suggested commands): see server/cli-command.ts. */
export { isCompiled, opentabsOnPath, runnableArgv, selfCommand, selfCommandText, selfSpawnCommand, shellWord } from '../server/cli-command.ts';
