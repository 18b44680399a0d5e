// state.mjs - Warble's web page shows nothing stale, in headless Chromium.
//   node tests/browser/state.mjs http://127.0.0.1:PORT MEDIA_MAX [SCREENSHOT_DIR]
// MEDIA_MAX is the cluster's WARBLE_MEDIA_MAX, below the 1 MiB default, so
// that the page's size check can only pass with the server's own limit.
// Each check runs in browser contexts of its own and prints "ok NAME" or
// "FAILED NAME: why"; every check runs, and the exit status is 1 if any
// failed.  What each holds:
//   logout_clears_forms       after Log out, no name or password left in a form
//   unknown_user_after_known  "no such user" shows nothing of the user before
//   late_answer_dropped       a profile's posts arriving after another was opened stay out
//   ended_session             a stored session the server ended: logged out at once
//   search_with_at            "  @Bob " finds bob
//   header_names_user         the header names who is logged in, and only them
//   profile_editor            display name and bio edited, checked first, errors shown
//   upload_size_checked       an image over the server's limit is refused unsent
//   relative_times            "now", "3 min", "2 h", "5 d", then a date, without reload
// Waits are bounded (CHECK_MS for what a broken page never shows); time is
// moved with playwright's clock, never slept through.
import { CHECK_MS, expect, until, launch, apiAt, account as accountAs, png } from './lib.mjs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const base = process.argv[2];
const mediaMax = Number(process.argv[3]);
const shots = process.argv[4] || 'tests/artifacts';
if (!base || !(mediaMax > 0)) {
  console.error('usage: node state.mjs BASE_URL MEDIA_MAX [SCREENSHOT_DIR]');
  process.exit(2);
}
const guard = setTimeout(() => { console.error('state: overall deadline passed'); process.exit(1); }, 150000);
const suffix = Date.now().toString(36).slice(-6);
const pass = 'correct-horse-battery';
const alice = 'alice_' + suffix, bob = 'bob_' + suffix, carol = 'carol_' + suffix;

const browser = await launch();

const api = apiAt(base);
const account = (name) => accountAs(api, name, pass);

// open gives a page of a fresh context (clock: playwright's fake clock
// installed first); errors thrown in the page fail the check.
async function open(errors, clock) {
  const ctx = await browser.newContext({ viewport: { width: 900, height: 800 } });
  if (clock) await ctx.clock.install();
  const page = await ctx.newPage();
  page.setDefaultTimeout(15000);
  page.on('pageerror', (e) => errors.push('page error: ' + e.message));
  await page.goto(base + '/');
  await page.waitForSelector('#view-auth:not([hidden])');
  return page;
}

async function login(page, name) {
  await page.fill('#login-name', name);
  await page.fill('#login-pass', pass);
  await page.click('#login-btn');
  await page.waitForSelector('#view-home:not([hidden])');
}

async function logout(page) {
  await page.click('#logout-btn');
  await page.waitForSelector('#view-auth:not([hidden])');
}

const visible = (page, sel) => page.locator(sel).isVisible();
const text = (page, sel) => page.locator(sel).textContent();

// openUser opens NAME's profile and waits until it has loaded.
async function openUser(page, name) {
  await page.goto(base + '/#/u/' + name);
  await until(page, '@' + name + "'s profile loads", (n) =>
    document.getElementById('user-name').textContent.startsWith('@' + n) &&
    (document.querySelector('#user-posts .post') || !document.getElementById('user-empty').hidden), name);
}

const checks = {
  async logout_clears_forms(errors) {
    const page = await open(errors);
    await page.fill('#reg-name', carol);
    await page.fill('#reg-pass', pass);
    await page.click('#reg-btn');
    await page.waitForSelector('#view-home:not([hidden])');
    const fields = ['#login-name', '#login-pass', '#reg-name', '#reg-pass'];
    const values = () => Promise.all(fields.map((f) => page.inputValue(f)));
    await logout(page);
    let v = await values();
    expect(v.every((x) => x === ''), 'after registering and logging out the forms hold ' + JSON.stringify(v));
    await login(page, alice);
    await logout(page);
    v = await values();
    expect(v.every((x) => x === ''), 'after logging in and out the forms hold ' + JSON.stringify(v));
  },

  async unknown_user_after_known(errors) {
    const page = await open(errors);
    await login(page, alice);
    await openUser(page, bob);
    expect((await page.locator('#user-posts .post').count()) === 2, "bob's two posts do not show");
    expect((await text(page, '#user-followers')) === '1', 'bob does not have his one fan');
    const nobody = 'nobody_' + suffix;
    await page.goto(base + '/#/u/' + nobody);
    await until(page, 'the page says there is no such user',
      () => /no such user/i.test(document.getElementById('msg').textContent));
    expect((await page.locator('#user-posts .post').count()) === 0, "bob's posts still show under @" + nobody);
    expect(!(await visible(page, '#user-followers')) && !(await visible(page, '#user-following')),
      "counts show for a user who does not exist (bob's: " + await text(page, '#user-followers') + ' fan)');
    expect(!(await visible(page, '#follow-btn')), 'a Follow button for a user who does not exist');
    expect((await text(page, '#user-name')) === '@' + nobody, 'the heading says ' + await text(page, '#user-name'));
  },

  async late_answer_dropped(errors) {
    // bob's posts are held while alice's page opens; alice's are then held
    // too, bob's let go and finished first, then alice's: her page shows
    // hers only, whatever came back for the page left behind.
    const page = await open(errors);
    await login(page, alice);
    const gates = {};
    const postsOf = (name) => (u) => u.pathname === `/api/v1/users/${name}/posts`;
    for (const name of [bob, alice]) {
      const g = gates[name] = {};
      g.asked = new Promise((r) => { g.held = r; });
      g.gate = new Promise((r) => { g.release = r; });
      await page.route(postsOf(name), async (route) => { g.held(); await g.gate; await route.continue(); });
    }
    await page.goto(base + '/#/u/' + bob);
    await gates[bob].asked;
    await page.goto(base + '/#/u/' + alice);
    await gates[alice].asked;
    const finished = (name) => page.waitForEvent('requestfinished', (r) => postsOf(name)(new URL(r.url())));
    let done = finished(bob);
    gates[bob].release();
    await done;
    done = finished(alice);
    gates[alice].release();
    await done;
    await until(page, "alice's post shows", (w) =>
      [...document.querySelectorAll('#user-posts .post .text')].some((e) => e.textContent === w), 'words of ' + alice);
    const texts = await page.locator('#user-posts .post .text').allTextContents();
    expect(texts.length === 1, '@' + alice + "'s page shows " + JSON.stringify(texts));
    expect((await text(page, '#user-name')).startsWith('@' + alice), 'the heading says ' + await text(page, '#user-name'));
    for (const name of [bob, alice]) await page.unroute(postsOf(name));
  },

  async ended_session(errors) {
    const page = await open(errors);
    await login(page, bob);
    // the home's own loads done first: one still on its way when the session
    // ends would see the 401 on this page, before the reload this checks
    await page.waitForLoadState('networkidle');
    const token = await page.evaluate(() => localStorage.getItem('warble.token'));
    expect(token, 'no stored session');
    const status = await page.evaluate(async (t) =>
      (await fetch('/api/v1/sessions', { method: 'DELETE', headers: { Authorization: 'Bearer ' + t } })).status, token);
    expect(status === 200, 'ending the session answered ' + status);
    await page.reload();
    try {
      await page.waitForSelector('#view-auth:not([hidden])', { timeout: CHECK_MS });
    } catch (e) {
      throw new Error('one reload after the session ended, the page still shows ' +
        await page.evaluate(() => [...document.querySelectorAll('main > section:not([hidden])')].map((s) => s.id)) +
        ' saying ' + JSON.stringify(await text(page, '#msg')));
    }
    expect(!(await visible(page, '#logout-btn')), 'Log out shows while logged out');
    expect((await page.evaluate(() => localStorage.getItem('warble.token'))) === null, 'the ended token is still stored');
    await until(page, 'the page says the session ended', () => /session/i.test(document.getElementById('msg').textContent));
    await login(page, bob); // and logging in again works at once
  },

  async search_with_at(errors) {
    const page = await open(errors);
    await login(page, alice);
    for (const typed of [`  @${bob} `, '@' + bob.toUpperCase()]) {
      await page.fill('#user-search', typed);
      await page.press('#user-search', 'Enter');
      await until(page, JSON.stringify(typed) + ' opens @' + bob, (n) =>
        location.hash === '#/u/' + n && document.getElementById('user-name').textContent.startsWith('@' + n) &&
        document.querySelectorAll('#user-posts .post').length === 2, bob);
      expect(!(await visible(page, '#msg')), 'searching says ' + await text(page, '#msg'));
      await page.goto(base + '/#/');
      await page.waitForSelector('#view-home:not([hidden])');
    }
  },

  async header_names_user(errors) {
    const page = await open(errors);
    expect(!(await text(page, 'header')).includes('@'), 'the header names someone while logged out');
    await login(page, alice);
    await until(page, 'the header names @' + alice, (n) => {
      const h = document.querySelector('header');
      return h.innerText.includes('@' + n);
    }, alice);
    await logout(page);
    expect(!(await page.locator('header').innerText()).includes(alice), 'the header still names ' + alice + ' logged out');
    await login(page, bob);
    const h = await page.locator('header').innerText();
    expect(h.includes('@' + bob) && !h.includes(alice), 'logged in as ' + bob + ' the header says ' + JSON.stringify(h));
  },

  async profile_editor(errors) {
    const page = await open(errors);
    await login(page, alice);
    let patches = 0;
    page.on('request', (r) => { if (r.method() === 'PATCH') patches++; });
    await openUser(page, bob);
    expect(!(await visible(page, '#edit-open')), "an Edit profile button on someone else's profile");
    await openUser(page, alice);
    try {
      await page.waitForSelector('#edit-open', { state: 'visible', timeout: CHECK_MS });
    } catch (e) {
      throw new Error('no Edit profile button on one\'s own profile');
    }
    await page.click('#edit-open');
    await page.waitForSelector('#edit-form:not([hidden])');
    const refused = async (display, bio, why) => {
      await page.fill('#edit-display', display);
      await page.fill('#edit-bio', bio);
      await until(page, why + ' is pointed out', () => !document.getElementById('edit-hint').hidden);
      expect(await page.isDisabled('#edit-save'), 'Save is enabled though ' + why);
      await page.evaluate(() => document.getElementById('edit-form').requestSubmit()); // Enter, say
    };
    await refused('x'.repeat(65), '', 'a display name of 65 characters');
    await refused('a\u0007b', '', 'a control character in the name');
    await refused('Alice', 'é'.repeat(141), 'a bio of 282 bytes (141 characters)');
    await refused('Alice', 'bell \u0007', 'a control character in the bio');
    expect(patches === 0, patches + ' PATCH sent for a refused profile');
    // at the bounds: 64 characters (70 bytes, 65 UTF-16 units), 280 bytes
    const name0 = 'Alice Ä 🌼 ', bio0 = 'first line\nsecond\tline ';
    const display = name0 + 'x'.repeat(64 - [...name0].length);
    const bio = bio0 + 'é'.repeat((280 - bio0.length) >> 1) + ((280 - bio0.length) % 2 ? 'x' : '');
    expect([...display].length === 64 && Buffer.byteLength(bio) === 280, 'the test\'s own bounds are wrong');
    await page.fill('#edit-display', display);
    await page.fill('#edit-bio', bio);
    await until(page, 'a name of 64 characters and a bio of 280 bytes are taken',
      () => document.getElementById('edit-hint').hidden && !document.getElementById('edit-save').disabled);
    await page.click('#edit-save');
    await until(page, 'the saved profile shows', (w) =>
      document.getElementById('user-name').textContent === w.name && document.getElementById('user-bio').textContent === w.bio &&
      document.getElementById('edit-form').hidden, { name: `@${alice} (${display})`, bio });
    expect(patches === 1, patches + ' PATCH sent for one save');
    await page.reload();
    await until(page, 'the profile is the server\'s after a reload', (w) =>
      document.getElementById('user-name').textContent === w.name && document.getElementById('user-bio').textContent === w.bio,
    { name: `@${alice} (${display})`, bio });
    await page.screenshot({ path: join(shots, 'browser-profile.png'), fullPage: true });

    // The server's own refusal shows: the request is changed on its way to what the page would refuse.
    await page.click('#edit-open');
    await page.fill('#edit-display', 'short');
    await page.route('**/api/v1/me', (route) => route.request().method() === 'PATCH'
      ? route.continue({ postData: JSON.stringify({ display: 'y'.repeat(65) }) }) : route.continue());
    await page.click('#edit-save');
    await until(page, "the server's refusal shows",
      () => /longer than 64/.test(document.getElementById('edit-hint').textContent + document.getElementById('msg').textContent));
    expect(await visible(page, '#edit-form'), 'the editor closed on a refusal');
    await page.screenshot({ path: join(shots, 'browser-profile-refused.png'), fullPage: true });
    expect((await text(page, '#user-name')) === `@${alice} (${display})`, 'a refused edit changed the heading');
    await page.unroute('**/api/v1/me');
  },

  async upload_size_checked(errors) {
    const page = await open(errors);
    await login(page, bob);
    let uploads = 0;
    page.on('request', (r) => { if (new URL(r.url()).pathname === '/api/v1/media') uploads++; });
    const big = Buffer.concat([png(4, 4), Buffer.alloc(mediaMax + 1 - png(4, 4).length)]);
    await page.setInputFiles('#post-images', { name: 'big.png', mimeType: 'image/png', buffer: big });
    await until(page, 'a file of ' + (mediaMax + 1) + ' bytes is refused, by name',
      () => /big\.png/.test(document.getElementById('msg').textContent));
    const msg = await text(page, '#msg');
    expect(/at most/.test(msg), 'the refusal does not give the limit: ' + msg);
    expect((await page.locator('#post-previews .preview').count()) === 0, 'the oversized file was added');
    await page.setInputFiles('#post-images', { name: 'small.png', mimeType: 'image/png', buffer: png(8, 8) });
    await page.waitForSelector('#post-previews .preview');
    await page.fill('#post-text', 'a small picture');
    await page.click('#post-btn');
    await page.waitForSelector('#home-list .post .images img');
    expect(uploads === 1, uploads + ' uploads sent; the small image only was to go');
  },

  async relative_times(errors) {
    const page = await open(errors, true);
    await login(page, bob);
    const words = 'tick ' + suffix;
    await page.fill('#post-text', words);
    await page.click('#post-btn');
    const post = page.locator('#home-list .post', { hasText: words }).first();
    await post.waitFor();
    const when = post.locator('time');
    const ms = Number(await when.getAttribute('datetime').then((d) => Date.parse(d)));
    expect(Number.isFinite(ms), 'the time has no datetime attribute');
    const shows = async (after, want) => {
      const now = await page.evaluate(() => Date.now());
      if (ms + after > now) await page.clock.fastForward(ms + after - now);
      try {
        await page.waitForFunction(([el, w]) => w.test(el.textContent), [await when.elementHandle(), want],
          { timeout: CHECK_MS });
      } catch (e) {
        throw new Error(`${after / 1000} s after posting the time says ${JSON.stringify(await when.textContent())}, not ${want}`);
      }
    };
    await shows(0, /^now$/);
    await shows(190e3, /^3 min$/);
    await shows(2 * 3600e3 + 60e3, /^2 h$/);
    await shows(5 * 86400e3 + 3600e3, /^5 d$/);
    await shows(9 * 86400e3, /^(?!now$)(?!\d+ (min|h|d)$).*\d/);
    expect((await when.getAttribute('title') || '').length > 0, 'no full date in the title');
  },
};

let failed = 0;
try {
  mkdirSync(shots, { recursive: true });
  // alice follows bob; bob has two posts, alice one
  const a = await account(alice), b = await account(bob);
  await api('PUT', '/me/following/' + bob, a);
  for (const t of ['first of ' + bob, 'second of ' + bob]) await api('POST', '/posts', b, { text: t });
  await api('POST', '/posts', a, { text: 'words of ' + alice });
  const only = process.env.WARBLE_STATE_CHECKS ? process.env.WARBLE_STATE_CHECKS.split(',') : Object.keys(checks);
  for (const name of only) {
    const errors = [];
    const t0 = Date.now();
    try {
      await checks[name](errors);
      if (errors.length) throw new Error(errors.join('; '));
      console.log(`ok ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAILED ${name}: ${e.message}`);
    }
    for (const ctx of browser.contexts()) await ctx.close();
  }
} catch (e) {
  failed++;
  console.error('state: FAILED: ' + (e && e.stack || e));
}
await browser.close().catch(() => {});
clearTimeout(guard);
console.log(failed ? `state: ${failed} failed` : 'state: ok');
process.exit(failed ? 1 : 0);
