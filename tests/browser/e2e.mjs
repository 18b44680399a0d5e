// e2e.mjs - Warble's web page end to end in headless Chromium.
//   node tests/browser/e2e.mjs http://127.0.0.1:PORT [screenshot.png]
// Two users register (two isolated browser contexts), one follows the
// other, the other posts, the first sees the post on the home timeline,
// unfollows, and the post is gone.  Exits 0 on success, 1 on failure.
// playwright-core's launch() gives Chromium a fresh temporary profile
// (--user-data-dir) and deletes it on close.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

const base = process.argv[2];
const shot = process.argv[3] || 'tests/artifacts/browser-home.png';
if (!base) {
  console.error('usage: node e2e.mjs BASE_URL [SCREENSHOT]');
  process.exit(2);
}
const guard = setTimeout(() => { console.error('e2e: overall deadline passed'); process.exit(1); }, 120000);
const suffix = Date.now().toString(36).slice(-6);
const alice = 'alice_' + suffix, bob = 'bob_' + suffix;
const text = 'grüße from ' + bob;

const browser = await chromium.launch({
  executablePath: process.env.WARBLE_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  timeout: 60000,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--disable-quic', '--disable-dev-shm-usage'],
});

function step(msg) { console.log('e2e: ' + msg); }

async function open(who) {
  const ctx = await browser.newContext({ viewport: { width: 900, height: 800 } });
  const page = await ctx.newPage();
  page.setDefaultTimeout(15000);
  page.on('pageerror', (e) => console.error(`e2e: ${who}: page error: ${e.message}`));
  await page.goto(base + '/');
  return page;
}

async function register(page, name) {
  await page.fill('#reg-name', name);
  await page.fill('#reg-pass', 'correct-horse-battery');
  await page.click('#reg-btn');
  await page.waitForSelector('#view-home:not([hidden])');
}

// until(page, check) clicks Refresh until check() holds (fan-out is asynchronous).
async function until(page, what, check) {
  const deadline = Date.now() + 20000;
  for (;;) {
    await page.click('#refresh-btn');
    await page.waitForTimeout(200);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error('timed out waiting until ' + what);
    await page.waitForTimeout(300);
  }
}

// visible(page, sel) is what a person sees: playwright's isVisible (layout
// and computed style), not the hidden attribute, which CSS can override.
const visible = (page, sel) => page.locator(sel).isVisible();

// sessionUi checks that the session controls show exactly when logged in.
async function sessionUi(page, who, loggedIn) {
  for (const sel of ['#logout-btn', '#nav-home', '#nav-me']) {
    if ((await visible(page, sel)) !== loggedIn) {
      throw new Error(`${who}: ${sel} is ${loggedIn ? 'hidden' : 'visible'} while ${loggedIn ? 'logged in' : 'logged out'}`);
    }
  }
}

const homeHas = (page) => page.locator('#home-list .post .text', { hasText: text }).count().then((n) => n > 0);

let a;
try {
  a = await open('alice');
  const b = await open('bob');
  step('logged out: no Log out button, no session links');
  await a.waitForSelector('#view-auth:not([hidden])');
  await sessionUi(a, alice, false);
  mkdirSync(dirname(shot), { recursive: true });
  await a.screenshot({ path: shot.replace(/\.png$/, '-logged-out.png'), fullPage: true });

  step('register ' + alice + ' and ' + bob);
  await register(a, alice);
  await sessionUi(a, alice, true);
  await register(b, bob);

  step(alice + ' follows ' + bob);
  await a.goto(base + '/#/u/' + bob);
  await a.waitForSelector('#follow-btn:not([hidden])');
  if ((await a.textContent('#follow-btn')) !== 'Follow') throw new Error('follow button does not say Follow');
  await a.click('#follow-btn');
  await a.waitForFunction(() => document.getElementById('follow-btn').textContent === 'Unfollow');
  if ((await a.textContent('#user-followers')) !== '1') throw new Error('bob does not have 1 fan');

  step(bob + ' posts');
  await b.fill('#post-text', text);
  const left = await b.textContent('#post-count');
  if (left !== String(280 - [...text].length)) throw new Error('remaining characters shows ' + left);
  await b.click('#post-btn');
  await b.waitForSelector('#home-list .post');

  step(alice + ' sees the post on her home timeline');
  await a.goto(base + '/#/');
  await a.waitForSelector('#view-home:not([hidden])');
  await until(a, 'the post is on the home timeline', () => homeHas(a));
  await a.screenshot({ path: shot, fullPage: true });
  step('screenshot ' + shot);

  step(alice + ' unfollows ' + bob);
  await a.goto(base + '/#/u/' + bob);
  await a.waitForFunction(() => document.getElementById('follow-btn').textContent === 'Unfollow');
  await a.click('#follow-btn');
  await a.waitForFunction(() => document.getElementById('follow-btn').textContent === 'Follow');
  await a.goto(base + '/#/');
  await a.waitForSelector('#view-home:not([hidden])');
  await until(a, 'the post is gone from the home timeline', async () => !(await homeHas(a)));

  step(alice + ' logs out: the session controls go');
  await a.click('#logout-btn');
  await a.waitForSelector('#view-auth:not([hidden])');
  await sessionUi(a, alice, false);
  step('ok');
  await browser.close();
  clearTimeout(guard);
  process.exit(0);
} catch (e) {
  console.error('e2e: FAILED: ' + (e && e.stack || e));
  if (a) {
    try { await a.screenshot({ path: shot.replace(/\.png$/, '-failed.png'), fullPage: true }); } catch (e2) { /* ignore */ }
  }
  await browser.close().catch(() => {});
  process.exit(1);
}
