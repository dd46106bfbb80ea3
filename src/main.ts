// The svcd command line: parse flags and SVCD_* variables, start a star (src/server.ts), print where it
// listens, and stop cleanly on SIGTERM/SIGINT.

import { resolve } from 'node:path';
import { ConfigError, helpText, loadConfig, type Config } from './config/config.ts';
import { AUTH_FLAGS, logError, startStar } from './server.ts';
import { BootError } from './config/boot-error.ts';
import { SHUTDOWN_REQUESTS_WAIT_MS_MAX } from './config/limits.ts';
import { hostPortText } from './config/flags.ts';
import { runCredentialsCli } from './cli/credentials.ts';
import { runGateway } from './gateway/cli.ts';

async function main(): Promise<void> {
  if (process.argv[2] === 'credentials') process.exit(await runCredentialsCli(process.argv.slice(3)));
  if (process.argv[2] === 'gateway') {
    const code = await runGateway(process.argv.slice(3));
    if (code !== undefined) process.exit(code);
    return;
  }
  let cfg: Config;
  try {
    cfg = loadConfig(process.argv.slice(2), process.env, AUTH_FLAGS);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`svcd: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  if (cfg.help) {
    console.log(helpText(AUTH_FLAGS));
    return;
  }
  let running: Awaited<ReturnType<typeof startStar>>;
  try {
    running = await startStar(cfg);
  } catch (err) {
    // Startup refusals (BootError: config/boot-error.ts) are one line; anything else is a crash with its stack.
    if (err instanceof BootError) {
      console.error(`svcd: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  // The handlers go in before the listening lines: a supervisor may signal the moment it reads one,
  // and a SIGTERM that came first would kill the star uncleanly.
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    const t0 = Date.now();
    console.error(`svcd: ${signal}: stopping (new connections refused; requests on their way are answered, at most ${SHUTDOWN_REQUESTS_WAIT_MS_MAX / 1000} s)`);
    void running.stop().then(
      () => { console.error(`svcd: stopped in ${Date.now() - t0} ms`); process.exit(0); },
      (err) => { logError('shutdown failed', err); process.exit(1); },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  // The data bridge's line comes first: tools and tests wait for it. Turned off, it says so rather
  // than naming a port nothing listens on.
  if (cfg.listen) console.log(`svcd listening on ${running.tls ? 'https' : 'http'}://${hostPortText(cfg.listen.host, running.port)} (engine ${running.engine}) data-dir ${resolve(cfg.dataDir)}`);
  else console.log(`svcd data bridge off (--listen '') data-dir ${resolve(cfg.dataDir)}`);
  if (running.grpcPort !== undefined) console.log(`svcd grpc listening on ${hostPortText(cfg.grpcListen!.host, running.grpcPort)}`);
  if (running.opsPort !== undefined) console.log(`svcd ops on http://${hostPortText(cfg.metricsListen!.host, running.opsPort)} (/metrics /healthz /readyz /debug/pprof/${cfg.adminUi ? ' /admin/' : ''})`);
}

main().catch((err) => {
  logError('fatal', err);
  process.exit(1);
});
