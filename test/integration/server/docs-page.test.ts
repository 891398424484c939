/**
 * The /docs page in a real headless Chromium (Debian's `chromium`, driven by playwright-core; no
 * browser download): it loads without a token, lists every operation of the OpenAPI document,
 * fetches nothing from outside the server, and a screenshot is kept for people to look at.
 *
 * Without /usr/bin/chromium the test is skipped with one line saying why, except in CI, where
 * it fails instead (.ci/run installs the package).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';

const CHROMIUM = process.env.NETFORM_TEST_CHROMIUM ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI)
  throw new Error(`${CHROMIUM} is missing: CI must run the docs page test (apt-get install chromium)`);
if (!available) console.warn(`skipping the /docs page test: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

export const SCREENSHOT = join(process.cwd(), 'test-results', 'docs-page.png');

let server: TestServer;
beforeAll(async () => {
  if (available) server = await startInProcessServer();
});
afterAll(async () => {
  await server?.stop();
});

describe.skipIf(!available)('the /docs page in Chromium', () => {
  it('loads without a token, lists every endpoint of the document, loads nothing from elsewhere', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-background-networking',
        '--disable-gpu',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 2400 } });
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      // Console errors include Content-Security-Policy refusals.
      page.on('console', (message) => {
        if (message.type() === 'error') pageErrors.push(message.text());
      });

      const response = await page.goto(`${server.url}/docs`, { waitUntil: 'networkidle' });
      expect(response?.status()).toBe(200);
      // A plain-HTTP server must not ask the browser to fetch its scripts over https.
      expect(response?.headers()['content-security-policy']).not.toContain('upgrade-insecure-requests');
      await page.waitForSelector('.opblock', { timeout: 20_000 });

      const doc = (await (await fetch(`${server.url}/v0/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const expected = Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      );
      const listed = await page.$$eval('.opblock', (blocks) =>
        blocks.map((b) => {
          const method = b.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '';
          const path =
            b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ??
            b.querySelector('.opblock-summary-path')?.textContent?.trim() ??
            '';
          return `${method} ${path.replace(/\u200b/g, '')}`;
        }),
      );
      expect(expected.length).toBeGreaterThanOrEqual(20);
      expect([...listed].sort()).toEqual([...expected].sort());
      await expect(page.title()).resolves.toMatch(/swagger|netform/i);
      expect(await page.textContent('.info .title')).toContain('netform /v0 API');

      expect(pageErrors).toEqual([]);
      const outside = requested.filter((url) => !url.startsWith(server.url) && !url.startsWith('data:'));
      expect(outside).toEqual([]);

      mkdirSync(join(process.cwd(), 'test-results'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: false });
      expect(existsSync(SCREENSHOT)).toBe(true);
    } finally {
      await browser.close();
    }
  });
});
