// A command of `svc`: its name (one or two words), usage line, help, flags and body.

import type { FlagSpec } from './args.ts';
import type { Context } from './context.ts';

export interface Command {
  /** `read`, or two words for a group (`config get`). */
  name: string;
  /** Arguments after the name, as the usage line shows them. */
  usage: string;
  /** One line, for the command list. */
  summary: string;
  /** Paragraphs for `svc <command> --help`. */
  details?: string;
  flags: readonly FlagSpec[];
  /** Resolves with the exit code (0 when nothing is returned). */
  run(ctx: Context): Promise<number | void>;
}
