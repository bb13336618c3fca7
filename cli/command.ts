/** The shape every `opentabs <command>` module exports. */
export interface Command {
  name: string;
  /** One line for `opentabs --help`. */
  summary: string;
  /** Full `--help` text. */
  help: string;
  /** Runs with the arguments after the command name; resolves to the exit code. */
  run(argv: string[]): Promise<number>;
}

/** Dispatch `<group> <sub> …` to a subcommand table, with `--help` at both levels. */
export async function runGroup(
  group: string,
  help: string,
  subs: Record<string, (argv: string[]) => Promise<number>>,
  argv: string[],
): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    const { say } = await import('./output.ts');
    say(help);
    return sub === undefined ? 2 : 0;
  }
  const fn = Object.hasOwn(subs, sub) ? subs[sub] : undefined;
  if (!fn) {
    const { usageError } = await import('./output.ts');
    const { closestWords, keepsArguments } = await import('./typo.ts');
    const { shellWord } = await import('./self.ts');
    const words = closestWords(sub, Object.keys(subs));
    // One candidate: the whole command line again with it, so it runs as the user meant it.
    const tail = words.length === 1 && keepsArguments(sub) && !rest.some((a) => a.includes('`')) ? rest.map((a) => ` ${shellWord(a)}`).join('') : '';
    const close = words.map((s) => `\`opentabs ${group} ${s}${tail}\``);
    // `opentabs setup cursor`: the clients setup does not write are configured from start's output.
    const others = group === 'setup' && close.length === 0 ? ' Other clients: `opentabs start --show-config` prints their configuration.' : '';
    throw usageError(`Unknown subcommand "${group} ${sub}".${close.length ? ` Did you mean ${close.join(' or ')}?` : ''} Expected one of: ${Object.keys(subs).join(', ')}.${others}`, group);
  }
  return fn(rest);
}
