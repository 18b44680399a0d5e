// e2e.mjs - Warble's web page end to end in headless Chromium.
//   node tests/browser/e2e.mjs http://127.0.0.1:PORT [screenshot.png [rich.png]]
// Two users register (two isolated browser contexts), one follows the
// other, the other posts and, reloading, finds it in his own home (from
// the server), the first sees the post on the home timeline, unfollows,
// and the post is gone.  Bob opens the post's own page from its time;
// alice, logged out, opens that address and reads it; bob deletes it
// there and the address says it is gone.  Then a rich post: bob follows alice,
// alice logs in again and posts a title, a category and an image (a PNG
// made here), seeing its preview first and an upload refused with the
// server's error; bob sees the title, the category chip and the image's
// preview loaded on his home timeline, linking to the original (which is
// served too) (screenshot rich.png, by default
// browser-rich-post.png beside screenshot.png), and the chip shows alice's
// posts of that category only.  Last, alice deletes her account from her
// own page: a wrong password is refused and keeps her logged in, the
// confirm is declined once, then the right password and the confirm log
// her out, her page says she is no more, and bob's home loses her posts.
// Exits 0 on success, 1 on failure.
// playwright-core's launch() gives Chromium a fresh temporary profile
// (--user-data-dir) and deletes it on close.
import { launch, png } from './lib.mjs';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

const base = process.argv[2];
const shot = process.argv[3] || 'tests/artifacts/browser-home.png';
const richShot = process.argv[4] || join(dirname(shot), 'browser-rich-post.png');
if (!base) {
  console.error('usage: node e2e.mjs BASE_URL [SCREENSHOT]');
  process.exit(2);
}
const guard = setTimeout(() => { console.error('e2e: overall deadline passed'); process.exit(1); }, 120000);
const suffix = Date.now().toString(36).slice(-6);
const alice = 'alice_' + suffix, bob = 'bob_' + suffix;
const text = 'grüße from ' + bob;

const browser = await launch();

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

// reloadUntil(page, what, check) reloads the page until check() holds: what
// the server gives, nothing the page kept itself (fan-out is asynchronous).
async function reloadUntil(page, what, check) {
  const deadline = Date.now() + 20000;
  for (;;) {
    await page.reload();
    await page.waitForFunction(() => document.querySelector('#home-list .post') ||
      !document.getElementById('home-empty').hidden);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error('timed out waiting until ' + what);
    await page.waitForTimeout(300);
  }
}

const homeHas = (page) => page.locator('#home-list .post .text', { hasText: text }).count().then((n) => n > 0);

// postPage: bob opens his post on its own page from its time; alice,
// logged out, opens the same address and reads it; bob deletes it there,
// and the address then says it is gone.
async function postPage(a, b) {
  step(bob + ' opens his post on its own page, from its time');
  await b.goto(base + '/#/');
  await b.waitForSelector('#view-home:not([hidden])');
  await b.locator('#home-list .post', { hasText: text }).first().locator('.meta a.when').click();
  await b.waitForFunction(() => /^#\/post\/[0-9]+$/.test(location.hash));
  await b.waitForSelector('#view-post:not([hidden]) #post-one .post .text');
  if ((await b.textContent('#post-one .post .text')) !== text) throw new Error('the post page shows another post');
  const address = b.url();

  step('logged out, ' + alice + ' opens ' + new URL(address).hash + ' and reads it');
  await a.goto(address);
  await a.waitForSelector('#view-post:not([hidden]) #post-one .post .text');
  if ((await a.textContent('#post-one .post .text')) !== text) throw new Error('logged out, the page shows ' + await a.textContent('#post-one'));
  if ((await a.textContent('#post-one .post .author')) !== '@' + bob) throw new Error('the post page names another author');
  if ((await a.locator('#post-one .post .del').count()) !== 0) throw new Error('a delete button for a visitor');
  await sessionUi(a, alice, false);

  step(bob + ' deletes it on its page; the address then says it is gone');
  await b.click('#post-one .post .del');
  await b.waitForSelector('#post-gone:not([hidden])');
  await a.reload();
  await a.waitForSelector('#view-post:not([hidden]) #post-gone:not([hidden])');
  if ((await a.locator('#post-one .post').count()) !== 0) throw new Error('a deleted post still shows');
  await a.goto(base + '/#/');
  await a.waitForSelector('#view-auth:not([hidden])');
}

// richPost: bob follows alice; alice logs in, posts plain text, then a
// post with a title, a category and an image; bob sees it, and its chip.
async function richPost(a, b) {
  const title = 'Sunset über the bay <b>' + suffix + '</b>';
  const category = 'photos_' + suffix;
  const rich = 'a gradient, 64 by 48';
  const alt = 'a red-blue gradient with a white stripe';
  const plain = 'plain words from ' + alice;

  step(bob + ' follows ' + alice);
  await b.goto(base + '/#/u/' + alice);
  await b.waitForFunction(() => document.getElementById('follow-btn').textContent === 'Follow');
  await b.click('#follow-btn');
  await b.waitForFunction(() => document.getElementById('follow-btn').textContent === 'Unfollow');

  step(alice + ' logs in and posts plain text');
  await a.fill('#login-name', alice);
  await a.fill('#login-pass', 'correct-horse-battery');
  await a.click('#login-btn');
  await a.waitForSelector('#view-home:not([hidden])');
  await a.fill('#post-text', plain);
  await a.click('#post-btn');
  await a.waitForSelector(`#home-list .post .text:text-is("${plain}")`);

  step('the category is checked before anything is sent');
  await a.fill('#post-title', title);
  await a.fill('#post-text', rich);
  await a.fill('#post-category', 'Not Valid');
  await a.waitForSelector('#post-hint:not([hidden])');
  if (!(await a.isDisabled('#post-btn'))) throw new Error('Post is enabled with an invalid category');
  await a.fill('#post-category', category);
  await a.waitForSelector('#post-hint', { state: 'hidden' });

  step('an upload the server refuses shows its error');
  await a.setInputFiles('#post-images', { name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('not an image at all') });
  await a.waitForSelector('#post-previews .preview');
  await a.click('#post-btn');
  await a.waitForSelector('#post-previews .preview.failed .err:not([hidden])');
  const refused = await a.textContent('#msg');
  if (!/fake\.png/.test(refused) || !/\([A-Z_]+\)/.test(refused)) throw new Error('upload error shows ' + JSON.stringify(refused));
  step('  ' + refused);
  await a.click('#post-previews .preview .remove');
  await a.waitForSelector('#post-previews .preview', { state: 'detached' });

  step(alice + ' picks an image: its preview shows before posting');
  await a.setInputFiles('#post-images', { name: 'gradient.png', mimeType: 'image/png', buffer: png(64, 48) });
  await a.waitForFunction(() => {
    const img = document.querySelector('#post-previews .preview img');
    return img && img.complete && img.naturalWidth === 64 && img.src.startsWith('blob:');
  });
  await a.fill('#post-previews .preview input.alt', alt);
  await a.fill('#post-text', ' \u3000 '); // blank text beside an image is a post
  if (await a.isDisabled('#post-btn')) throw new Error('blank text beside an image is refused');
  if (await visible(a, '#post-hint')) throw new Error('a hint against blank text beside an image');
  await a.fill('#post-text', rich);
  if ((await a.locator('#home-list .post .title').count()) !== 0) throw new Error('posted before Post was clicked');
  await a.screenshot({ path: richShot.replace(/\.png$/, '-compose.png'), fullPage: true });

  step(alice + ' posts it: the form is disabled while the upload runs');
  let release;
  const held = new Promise((r) => { release = r; });
  await a.route('**/api/v1/media', async (route) => { await held; await route.continue(); });
  await a.click('#post-btn');
  await a.waitForFunction(() => {
    const btn = document.getElementById('post-btn');
    return btn.disabled && btn.textContent.startsWith('Posting') && document.getElementById('post-fields').disabled;
  });
  release();
  await a.waitForSelector('#home-list .post .title');
  await a.unroute('**/api/v1/media');
  await a.waitForSelector('#post-previews .preview', { state: 'detached' });
  if (!(await a.isDisabled('#post-btn'))) throw new Error('Post is enabled with an empty form');

  step(bob + ' sees the title, the category and the image on his home timeline');
  await b.goto(base + '/#/');
  await b.waitForSelector('#view-home:not([hidden])');
  const post = b.locator('#home-list .post', { has: b.locator('.title') }).first();
  await until(b, 'the rich post is on the home timeline', async () => (await post.count()) > 0);
  if ((await post.locator('.title').textContent()) !== title) throw new Error('title shows ' + await post.locator('.title').textContent());
  if ((await post.locator('.title b').count()) !== 0) throw new Error('the title was parsed as HTML');
  if ((await post.locator('.text').textContent()) !== rich) throw new Error('text shows ' + await post.locator('.text').textContent());
  if ((await post.locator('.meta .chip').textContent()) !== category) throw new Error('no category chip');
  const img = post.locator('.images img');
  await img.scrollIntoViewIfNeeded();
  await b.waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle());
  const got = await img.evaluate((el) => ({
    w: el.naturalWidth, h: el.naturalHeight, aw: el.getAttribute('width'), ah: el.getAttribute('height'),
    alt: el.alt, loading: el.loading, src: new URL(el.src).pathname, href: new URL(el.parentElement.href).pathname,
  }));
  // the timeline shows the preview; the original is one click away
  if (got.w !== 64 || got.h !== 48 || got.aw !== '64' || got.ah !== '48' || got.alt !== alt ||
      got.loading !== 'lazy' || !/^\/media\/[0-9]+-[0-9]+\/preview$/.test(got.src) ||
      got.href !== got.src.replace(/\/preview$/, '')) {
    throw new Error('image is ' + JSON.stringify(got));
  }
  const orig = await b.evaluate(async (u) => {
    const r = await fetch(u);
    return { status: r.status, type: r.headers.get('Content-Type') };
  }, got.href);
  if (orig.status !== 200 || orig.type !== 'image/png') throw new Error('the original is ' + JSON.stringify(orig));
  await b.screenshot({ path: richShot, fullPage: true });
  step('screenshot ' + richShot);

  step('the chip shows ' + alice + "'s posts in " + category + ' only');
  await post.locator('.meta .chip').click();
  await b.waitForFunction((c) => location.hash.endsWith('/category/' + c), category);
  await b.waitForSelector('#user-filter:not([hidden])');
  await b.waitForSelector('#user-posts .post .title');
  const texts = await b.locator('#user-posts .post .text').allTextContents();
  if (texts.length !== 1 || texts[0] !== rich) throw new Error('category page shows ' + JSON.stringify(texts));
  await b.click('#user-filter-all');
  await b.waitForSelector('#user-filter', { state: 'hidden' });
  await b.waitForFunction(() => document.querySelectorAll('#user-posts .post').length === 2);
}

// deleteAccount: alice deletes her account from her own page; bob's home loses her posts.
async function deleteAccount(a, b) {
  step(alice + ' leaves a draft in the compose form, then opens her own page: the Delete account card is there, not on bob\'s');
  await a.goto(base + '/#/');
  await a.waitForSelector('#view-home:not([hidden])');
  await a.fill('#post-text', 'a draft, never sent');
  await a.goto(base + '/#/u/' + bob);
  await a.waitForSelector('#view-user:not([hidden])');
  await a.waitForFunction(() => document.getElementById('user-name').textContent.startsWith('@'));
  if (await visible(a, '#delete-account')) throw new Error('the delete card shows on someone else\'s page');
  await a.goto(base + '/#/u/' + alice);
  await a.waitForSelector('#delete-account:not([hidden])');
  if (await visible(a, '#delete-form')) throw new Error('the password field shows before the button is pressed');
  await a.click('#delete-open');
  await a.waitForSelector('#delete-form:not([hidden])');

  step('a wrong password is refused and she stays logged in');
  a.once('dialog', (d) => d.accept());
  await a.fill('#delete-pass', 'not-her-password');
  await a.click('#delete-btn');
  await a.waitForFunction(() => /password is wrong/.test(document.getElementById('msg').textContent));
  await sessionUi(a, alice, true);

  step('declining the confirm deletes nothing');
  a.once('dialog', (d) => d.dismiss());
  await a.fill('#delete-pass', 'correct-horse-battery');
  await a.click('#delete-btn');
  await a.waitForTimeout(300);
  await sessionUi(a, alice, true);

  step('the right password and the confirm: deleted, logged out');
  let asked = '';
  a.once('dialog', (d) => { asked = d.message(); d.accept(); });
  await a.fill('#delete-pass', 'correct-horse-battery');
  await a.click('#delete-btn');
  await a.waitForSelector('#view-auth:not([hidden])');
  if (!asked.includes(alice)) throw new Error('the confirm did not name the account: ' + asked);
  await sessionUi(a, alice, false);
  const said = await a.textContent('#msg');
  if (!said.includes('deleted')) throw new Error('after the deletion the page says ' + JSON.stringify(said));
  const kept = await a.evaluate(() => ['delete-pass', 'post-text']
    .filter((id) => document.getElementById(id).value !== ''));
  if (kept.length) throw new Error('after the deletion these still hold text: ' + kept.join(', '));
  if (await a.evaluate(() => !document.getElementById('delete-form').hidden)) {
    throw new Error('the password field of the deletion is still open');
  }

  step(bob + "'s home no longer shows her posts; her page is gone");
  await b.goto(base + '/#/');
  await b.waitForSelector('#view-home:not([hidden])');
  await until(b, "alice's posts are gone from bob's home", async () =>
    (await b.locator('#home-list .post .author', { hasText: '@' + alice }).count()) === 0);
  await b.goto(base + '/#/u/' + alice);
  await b.waitForFunction(() => /no such user/i.test(document.getElementById('msg').textContent));
}

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

  step('text of only white space is refused before anything is sent');
  let sent = 0;
  await b.route('**/api/v1/posts', (route) => { sent++; return route.continue(); });
  await b.fill('#post-text', ' \u3000\n\u00a0\t\u200b');
  await b.waitForSelector('#post-hint:not([hidden])');
  if (!/white space/.test(await b.textContent('#post-hint'))) throw new Error('the hint says ' + await b.textContent('#post-hint'));
  if (!(await b.isDisabled('#post-btn'))) throw new Error('Post is enabled with blank text');
  await b.evaluate(() => document.getElementById('post-form').requestSubmit()); // Enter, say
  await b.waitForFunction(() => /white space/.test(document.getElementById('msg').textContent));
  if (sent !== 0) throw new Error('blank text was sent');
  await b.unroute('**/api/v1/posts');

  step(bob + ' posts');
  await b.fill('#post-text', text);
  await b.waitForSelector('#post-hint', { state: 'hidden' });
  const left = await b.textContent('#post-count');
  if (left !== String(280 - [...text].length)) throw new Error('remaining characters shows ' + left);
  await b.click('#post-btn');
  await b.waitForSelector('#home-list .post');

  step(bob + ' reloads: his own post is in his home, as the server gives it');
  await reloadUntil(b, 'his own post is in his home after a reload', async () =>
    (await b.locator('#home-list .post .text', { hasText: text }).count()) > 0);

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

  await postPage(a, b);
  await richPost(a, b);
  await deleteAccount(a, b);
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
