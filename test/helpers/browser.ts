// Debian's chromium, driven by playwright-core, for the tests that need a real browser (the dashboard,
// the Gateway over TLS). Every wait on it is bounded: launching and page actions by playwright's own
// timeouts, closing here, since a browser that will not close (a known playwright failure) must fail
// at most its own test, never hang the run.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { within } from './server.ts';

export const CHROMIUM = '/usr/bin/chromium';
/** As the machine's probe starts it: without the background-networking flags Chromium's calls home are
 *  refused by this machine's closed network, many at a time. */
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];
/** How long a browser may take to close before its process is SIGKILLed. */
const BROWSER_CLOSE_MS_MAX = 10_000;
/** How long connecting to the launched browser may take (playwright's default is no bound). */
const BROWSER_CONNECT_MS_MAX = 30_000;

/** Under CI the browser tests must run (.ci/run installs chromium); elsewhere it may be absent. */
export const noBrowser: string | false = !existsSync(CHROMIUM) && process.env.CI !== 'true'
  ? `no browser at ${CHROMIUM} (apt-get install -y chromium); this test runs whenever CI=true`
  : false;

export interface OpenBrowser { page: Page; close(): Promise<void> }

/** A fresh headless browser (playwright gives it a new empty profile) with one page. Launched as a
 *  server so that its process can be killed when closing it does not end. */
export async function openBrowser(extraArgs: readonly string[] = []): Promise<OpenBrowser> {
  // No signal handlers of playwright's: the test runner's SIGTERM must end the file's process
  // (test/helpers/reap.mjs kills the browser with the rest of its children).
  const server = await chromium.launchServer({
    executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs],
    handleSIGTERM: false, handleSIGINT: false, handleSIGHUP: false,
  });
  let browser: Browser | undefined;
  try {
    browser = await chromium.connect(server.wsEndpoint(), { timeout: BROWSER_CONNECT_MS_MAX });
    const page = await (await browser.newContext()).newPage();
    const connected = browser;
    return {
      page,
      async close() {
        // A close that fails has ended as well; only one that hangs is killed.
        const closing = connected.close().then(() => server.close()).catch(() => undefined);
        if (await within(closing, BROWSER_CLOSE_MS_MAX)) return;
        process.stderr.write(`test: the browser did not close within ${BROWSER_CLOSE_MS_MAX} ms; SIGKILLed\n`);
        await server.kill();
      },
    };
  } catch (err) {
    await server.kill();
    throw err;
  }
}
