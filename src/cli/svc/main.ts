// `svc`: the command line of svcd. Picks the command, parses its flags, runs it, and turns any failure
// into one line on stderr and an exit code scripts can trust (exit.ts).

import { FlagError } from '../../config/flags.ts';
import { Args, GLOBAL_FLAGS, flagsHelp, parseArgs } from './args.ts';
import type { Command } from './command.ts';
import { Context, DEFAULT_URL, OutputClosed } from './context.ts';
import { EXIT, EXIT_HELP, describeFailure } from './exit.ts';
import { credentialsCreate, credentialsList, credentialsRevoke, token } from './commands/auth.ts';
import { bench } from './commands/bench.ts';
import { append, checkTail, fence, read, tail, trim } from './commands/records.ts';
import { configGet, configSet, create, del, ls } from './commands/resources.ts';

export const COMMANDS: readonly Command[] = [
  ls, create, del, configGet, configSet, append, read, tail, checkTail, trim, fence, token,
  credentialsCreate, credentialsList, credentialsRevoke, bench,
];

/** Words that start a two-word command. */
const GROUPS = new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]));

export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    'usage: svc <command> [arguments] [flags]',
    '',
    'The command line of svcd. Addresses are svc://BUCKET or svc://BUCKET/KEY (a key is percent-encoded:',
    'svc://orders/eu%2Fwest names the key "eu/west"). The server comes from --url or SVC_URL',
    `(default ${DEFAULT_URL}), the bearer token from --token or SVC_TOKEN.`,
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Flags of every command:',
    flagsHelp(GLOBAL_FLAGS),
    '',
    'Examples:',
    '  svc create svc://orders create_stream_on_append=true',
    '  seq 1 100000 | svc append svc://orders/eu',
    '  svc read svc://orders/eu --since 10m',
    '  svc tail -f svc://orders/eu',
    '',
    EXIT_HELP,
    '',
    'svc <command> --help shows a command\'s flags.',
  ].join('\n');
}

export function commandHelp(c: Command): string {
  return [
    `usage: svc ${c.name}${c.usage ? ` ${c.usage}` : ''} [flags]`,
    '',
    c.summary.charAt(0).toUpperCase() + c.summary.slice(1) + '.',
    ...(c.details ? ['', c.details] : []),
    '',
    'Flags:',
    flagsHelp([...c.flags, ...GLOBAL_FLAGS]),
    '',
    EXIT_HELP,
  ].join('\n');
}

function find(argv: readonly string[]): { command: Command | undefined; rest: readonly string[]; asked: string } {
  const [first, second] = argv;
  if (first !== undefined && GROUPS.has(first)) {
    const name = `${first} ${second ?? ''}`;
    return { command: COMMANDS.find((c) => c.name === name), rest: argv.slice(2), asked: name.trim() };
  }
  return { command: COMMANDS.find((c) => c.name === first), rest: argv.slice(1), asked: first ?? '' };
}

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(`${mainHelp()}\n`);
    return argv.length === 0 ? EXIT.USAGE : EXIT.OK;
  }
  const { command, rest, asked } = find(argv);
  if (!command) {
    const group = GROUPS.has(argv[0]) ? ` (${COMMANDS.filter((c) => c.name.startsWith(`${argv[0]} `)).map((c) => c.name).join(', ')})` : '';
    const message = `unknown command ${JSON.stringify(asked)}${group}; see svc --help`;
    process.stderr.write(argv.includes('--json') ? `${JSON.stringify({ error: message, kind: 'usage' })}\n` : `svc: ${message}\n`);
    return EXIT.USAGE;
  }
  let ctx: Context | undefined;
  try {
    const args = new Args(parseArgs(rest, command.flags, env));
    if (args.bool('help')) {
      process.stdout.write(`${commandHelp(command)}\n`);
      return EXIT.OK;
    }
    ctx = new Context(args, env);
    const code = (await command.run(ctx)) ?? EXIT.OK;
    await ctx.out.flush();
    return code;
  } catch (err) {
    if (err instanceof OutputClosed) return EXIT.OK;
    const f = describeFailure(err);
    const json = ctx?.json ?? rest.includes('--json');
    process.stderr.write(json ? `${JSON.stringify(f.json)}\n` : `svc: ${f.message}${err instanceof FlagError && !f.message.includes('--help') ? `\n(svc ${command.name} --help)` : ''}\n`);
    return f.code;
  } finally {
    ctx?.close();
  }
}

/** Runs the command line of this process and sets its exit code (bin/svc.mjs calls it). */
export function runCommandLine(): Promise<void> {
  return main(process.argv.slice(2), process.env).then(
    (code) => {
      process.exitCode = code;
      // An interrupted command has said where it stopped; whatever it left running (a retry's timer,
      // a socket) must not keep the process alive after the user asked it to stop.
      if (code === EXIT.INTERRUPTED) process.exit(code);
    },
    (err: unknown) => { process.stderr.write(`svc: ${err instanceof Error ? err.stack : String(err)}\n`); process.exitCode = 1; },
  );
}

// Run when executed directly (node --import tsx src/cli/svc/main.ts), not when imported.
if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) void runCommandLine();
