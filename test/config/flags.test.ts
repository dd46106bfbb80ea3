// The flag framework's rules (src/config/flags.ts), one test each, and that every command's --help
// names each flag's variable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlagError, flagsHelp, nonNegativeInt, parseFlags, positiveInt, type FlagSpec } from '../../src/config/flags.ts';
import { GRPC_KEEPALIVE_PING_MS, GRPC_KEEPALIVE_PING_MS_MIN, TIMER_DELAY_MS_MAX } from '../../src/config/limits.ts';
import { ConfigError, FLAGS, loadConfig } from '../../src/config/config.ts';
import { GATEWAY_FLAGS } from '../../src/gateway/cli.ts';
import { CREDENTIALS_FLAGS } from '../../src/cli/credentials.ts';
import { GLOBAL_FLAGS } from '../../src/cli/svc/args.ts';

const SPECS: FlagSpec[] = [
  { name: 'listen', env: 'T_LISTEN', help: 'address', default: '127.0.0.1:1' },
  { name: 'token', env: 'T_TOKEN', value: 'JWT', help: 'a token' },
  { name: 'verbose', short: 'v', env: 'T_VERBOSE', help: 'talk', boolean: true, default: 'false' },
  { name: 'header', help: 'a header', repeat: 'all' },
  { name: 'key-id', help: 'an id', repeat: 'once' },
  { name: '', env: 'T_SECRET', help: 'a secret', envOnly: true },
];

/** The FlagError a call throws (fails the test when it throws nothing or something else). */
function refusal(fn: () => unknown): FlagError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof FlagError, `a FlagError, got ${String(err)}`);
    assert.doesNotMatch(err.message, /\n/, 'one line');
    return err;
  }
  assert.fail('expected a FlagError');
}

test('--flag value and --flag=value are the same', () => {
  assert.equal(parseFlags(['--listen', 'h:2'], SPECS, {}).str('listen'), 'h:2');
  assert.equal(parseFlags(['--listen=h:2'], SPECS, {}).str('listen'), 'h:2');
  assert.equal(parseFlags(['--listen=a=b'], SPECS, {}).str('listen'), 'a=b', 'only the first = splits');
});

test('a value is the next word even when it starts with a dash', () => {
  assert.equal(parseFlags(['--token', '--listen'], SPECS, {}).str('token'), '--listen');
});

test('a boolean alone is true; =false, a following true|false word, and -x alias are read', () => {
  assert.equal(parseFlags(['--verbose'], SPECS, {}).bool('verbose'), true);
  assert.equal(parseFlags(['--verbose=false'], SPECS, {}).bool('verbose'), false);
  assert.equal(parseFlags(['--verbose', 'false'], SPECS, {}).bool('verbose'), false);
  assert.equal(parseFlags(['-v'], SPECS, {}).bool('verbose'), true);
  assert.equal(parseFlags([], SPECS, {}).bool('verbose'), false);
});

test('a boolean does not swallow a word that is not true or false', () => {
  const f = parseFlags(['--verbose', 'svc://b/k'], SPECS, {}, { positionals: true });
  assert.equal(f.bool('verbose'), true);
  assert.deepEqual(f.positionals, ['svc://b/k']);
});

test('a bad boolean is refused where it is given, naming the flag', () => {
  assert.match(refusal(() => parseFlags(['--verbose=yes'], SPECS, {})).message, /^--verbose must be true or false/);
  assert.match(refusal(() => parseFlags([], SPECS, { T_VERBOSE: 'maybe' }).bool('verbose')).message, /^--verbose must be true or false/);
});

test('a flag given twice: the last wins', () => {
  assert.equal(parseFlags(['--listen', 'a:1', '--listen', 'b:2'], SPECS, {}).str('listen'), 'b:2');
});

test('a repeatable flag keeps every value in order', () => {
  assert.deepEqual(parseFlags(['--header', 'a', '--header=b'], SPECS, {}).all('header'), ['a', 'b']);
  assert.deepEqual(parseFlags([], SPECS, {}).all('header'), []);
});

test('a once-only flag given twice is refused, naming it', () => {
  assert.equal(refusal(() => parseFlags(['--key-id', 'a', '--key-id', 'b'], SPECS, {})).message, '--key-id given twice');
});

test('the flag beats its variable, the variable beats the default', () => {
  assert.equal(parseFlags(['--listen', 'f:1'], SPECS, { T_LISTEN: 'e:1' }).str('listen'), 'f:1');
  assert.equal(parseFlags([], SPECS, { T_LISTEN: 'e:1' }).str('listen'), 'e:1');
  assert.equal(parseFlags([], SPECS, {}).str('listen'), '127.0.0.1:1');
  assert.equal(parseFlags([], SPECS, {}).str('token'), undefined, 'no default: unset');
});

test('an empty variable counts as unset', () => {
  assert.equal(parseFlags([], SPECS, { T_LISTEN: '' }).str('listen'), '127.0.0.1:1');
  assert.equal(parseFlags(['--listen', ''], SPECS, {}).str('listen'), '', 'an empty flag is a value');
});

test('has() and given() see the command line only, not variables', () => {
  const f = parseFlags(['--token', 't'], SPECS, { T_LISTEN: 'e:1' });
  assert.equal(f.has('listen'), false);
  assert.equal(f.has('token'), true);
  assert.deepEqual(f.given(), ['token']);
  assert.equal(f.argv('listen'), undefined);
});

test('an unknown flag is refused, naming it', () => {
  assert.match(refusal(() => parseFlags(['--bogus', 'x'], SPECS, {})).message, /^unknown flag --bogus\b/);
  assert.match(refusal(() => parseFlags(['-q'], SPECS, {})).message, /^unknown flag -q\b/);
});

test('a missing value is refused, naming the flag and its placeholder', () => {
  assert.equal(refusal(() => parseFlags(['--listen'], SPECS, {})).message, '--listen needs a value');
  assert.equal(refusal(() => parseFlags(['--token'], SPECS, {})).message, '--token needs a value (JWT)');
});

test('an env-only setting is refused on the command line and read from its variable', () => {
  assert.match(refusal(() => parseFlags(['--'], SPECS, {})).message, /^unknown flag --/, 'its empty name matches nothing');
  const secret: FlagSpec[] = [{ name: 'secret', env: 'T_SECRET', help: 's', envOnly: true }];
  assert.equal(refusal(() => parseFlags(['--secret', 'x'], secret, {})).message, '--secret is read from T_SECRET only');
  assert.equal(parseFlags([], secret, { T_SECRET: 'x' }).str('secret'), 'x');
});

test('a stray word is refused unless the command takes positionals; -- ends the flags', () => {
  assert.equal(refusal(() => parseFlags(['extra'], SPECS, {})).message, 'unexpected argument extra');
  const f = parseFlags(['a', '-', '--', '--listen', 'b'], SPECS, {}, { positionals: true });
  assert.deepEqual(f.positionals, ['a', '-', '--listen', 'b']);
  assert.equal(f.has('listen'), false);
});

test('integers are decimal digits; a bad one is refused naming the flag', () => {
  assert.equal(nonNegativeInt('0', 'n'), 0);
  assert.equal(positiveInt('42', 'n'), 42);
  for (const bad of ['', ' 5', '1e3', '0x10', '-1', '1.5']) {
    assert.match(refusal(() => nonNegativeInt(bad, 'lease-idle-ms')).message, /^--lease-idle-ms must be a non-negative integer/, JSON.stringify(bad));
  }
  assert.match(refusal(() => positiveInt('0', 'n')).message, /^--n must be a positive integer/);
  assert.equal(parseFlags(['--listen', '7'], SPECS, {}).int('listen'), 7);
});

test('an interval a timer cannot hold is refused, not run every millisecond', () => {
  assert.equal(loadConfig(['--unsettled-sweep-ms', String(TIMER_DELAY_MS_MAX)], {}).unsettledSweepMs, TIMER_DELAY_MS_MAX);
  assert.match(refusal(() => loadConfig(['--unsettled-sweep-ms', String(TIMER_DELAY_MS_MAX + 1)], {})).message, /^--unsettled-sweep-ms must be at most 2147483647 ms/);
  assert.match(refusal(() => loadConfig([], { SVCD_UNSETTLED_SWEEP_MS: '0' })).message, /^--unsettled-sweep-ms must be a positive integer/);
  // The SSE heartbeat, its stall bound and the gRPC keepalive are timers too: past the ceiling Node
  // fires them after 1 ms.
  for (const flag of ['sse-heartbeat-ms', 'sse-stall-ms', 'grpc-keepalive-ms']) {
    assert.match(refusal(() => loadConfig([`--${flag}`, String(TIMER_DELAY_MS_MAX + 1)], {})).message, new RegExp(`^--${flag} must be at most 2147483647 ms`));
  }
  assert.equal(loadConfig(['--sse-stall-ms', String(TIMER_DELAY_MS_MAX)], {}).sse.stallMs, TIMER_DELAY_MS_MAX);
  // The gRPC keepalive pings every connection: a few milliseconds is load, not a check.
  assert.equal(loadConfig([], {}).grpcKeepaliveMs, GRPC_KEEPALIVE_PING_MS);
  assert.equal(loadConfig([], { SVCD_GRPC_KEEPALIVE_MS: String(GRPC_KEEPALIVE_PING_MS_MIN) }).grpcKeepaliveMs, GRPC_KEEPALIVE_PING_MS_MIN);
  assert.match(refusal(() => loadConfig(['--grpc-keepalive-ms', String(GRPC_KEEPALIVE_PING_MS_MIN - 1)], {})).message, /^--grpc-keepalive-ms must be at least 100 ms/);
});

test('svcd refuses with the same error type (ConfigError is FlagError)', () => {
  assert.throws(() => loadConfig(['--bogus'], {}), FlagError);
  assert.throws(() => loadConfig(['--lease-idle-ms', '1e3'], {}), ConfigError);
});

test('--help lists each flag with its placeholder, default and variable; env-only rows show the variable', () => {
  const help = flagsHelp(SPECS);
  assert.match(help, /^ {2}--listen VALUE +address \(default 127\.0\.0\.1:1\) \[T_LISTEN\]$/m);
  assert.match(help, /^ {2}--token JWT +a token \[T_TOKEN\]$/m);
  assert.match(help, /^ {2}-v, --verbose +talk \(default false\) \[T_VERBOSE\]$/m);
  assert.match(help, /^ {2}T_SECRET +a secret \(environment only\)$/m);
});

test('every command\'s help names each flag\'s variable (svcd, Gateway, credentials, svc)', () => {
  for (const [command, specs, prefix] of [['svcd', FLAGS, 'SVCD_'], ['gateway', GATEWAY_FLAGS, 'SVCD_'], ['credentials', CREDENTIALS_FLAGS, 'SVCD_'], ['svc', GLOBAL_FLAGS, 'SVC_']] as const) {
    const help = flagsHelp(specs);
    for (const s of specs) {
      if (s.name === 'help' || s.env === undefined || s.env === '') continue;
      assert.ok(s.env.startsWith(prefix), `${command} --${s.name}: ${s.env}`);
      assert.ok(help.includes(s.env), `${command} help shows ${s.env}`);
    }
  }
  assert.ok(GATEWAY_FLAGS.filter((s) => s.env?.startsWith('SVCD_GATEWAY_')).length >= 6, 'the Gateway\'s own flags carry SVCD_GATEWAY_*');
});
