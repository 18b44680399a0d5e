// Warble web page: a small single-page client of the HTTP/JSON API
// (docs/http-api.md).  Routes live in the URL hash:
//   #/                  home timeline (or log in / register); an empty one
//                       shows whom to follow (GET /api/v1/me/suggestions)
//   #/u/NAME            a user's posts, counts, follow and block buttons (one's own:
//                       delete account)
//   #/u/NAME/category/C NAME's posts in category C (?category=C)
//   #/u/NAME/following  whom NAME follows;  #/u/NAME/fans  who follows NAME
//   #/post/ID           one post on its own: the address to share (logged in or not)
'use strict';

const API = '/api/v1';
// The server's limits, checked before anything is sent: these until GET
// /api/v1/limits answers with its own (loadLimits; docs/http-api.md).
// Text, title, alt text and display name in code points, as the server
// counts them; a bio in bytes of UTF-8; an image in bytes, at most
// images_max of them (of the types below) a post.
const limits = {
  text_max: 280, title_max: 100, alt_max: 1000, images_max: 4, display_max: 64, bio_max: 280,
  media_max: 1 << 20,
};
const CATEGORY_RE = /^[a-z0-9_]{1,32}$/;
// A blank text shows nothing: only white space (Unicode's White_Space) and
// zero-width characters, the server's list (services/content/content_text.c).
// The server refuses it (BAD_TEXT) unless the post has an image.
const BLANK_RE = /^[\t-\r \u0085\u00a0\u1680\u180e\u2000-\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff]*$/;
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const $ = (id) => document.getElementById(id);
const state = { token: localStorage.getItem('warble.token'), me: localStorage.getItem('warble.name') };

// api calls the API: body is sent as JSON, or as it is when it is a Blob
// (an image upload).  An error reply throws an Error with the reply's
// message, its code (the JSON "error") and the HTTP status; a 401 to a
// request sent with the session still in use ends it (sessionEnded), not
// a late one for a session left since (logged out, or another logged in),
// nor a wrong password (BAD_CREDENTIALS: changing it, deleting the account).
async function api(method, path, body) {
  const headers = {}, sent = state.token;
  if (state.token) headers['Authorization'] = 'Bearer ' + state.token;
  let payload;
  if (body instanceof Blob) {
    payload = body;
  } else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(API + path, { method, headers, body: payload });
  let data = {};
  try { data = await res.json(); } catch (e) { /* empty body */ }
  if (!res.ok) {
    const err = new Error(data.message || res.statusText);
    err.code = data.error; err.status = res.status;
    if (res.status === 401 && sent && sent === state.token && path !== '/sessions' &&
        data.error !== 'BAD_CREDENTIALS') { // a wrong password keeps the session
      forget();
      sessionEnded(err);
    }
    throw err;
  }
  return data;
}

// sessionEnded: the server no longer takes the stored session (it ended
// elsewhere, or expired) and api() has forgotten it: the page says so and
// shows the logged-out view at once, not after another reload.
function sessionEnded(err) {
  err.message = 'Your session has ended: log in again.';
  say(err.message);
  route();
}

function say(text, ok) {
  const m = $('msg');
  m.textContent = text; m.className = ok ? 'ok' : ''; m.hidden = !text;
}

function forget() {
  state.token = null; state.me = null;
  localStorage.removeItem('warble.token'); localStorage.removeItem('warble.name');
}

function remember(token, name) {
  state.token = token; state.me = name;
  localStorage.setItem('warble.token', token); localStorage.setItem('warble.name', name);
}

function show(view) {
  for (const v of ['auth', 'home', 'user', 'list', 'post']) $('view-' + v).hidden = v !== view;
  $('nav').hidden = !state.token;
  if (state.me) $('nav-me').href = '#/u/' + encodeURIComponent(state.me);
  $('nav-me').textContent = state.me ? '@' + state.me : 'Me'; // who is logged in
}

// clearAuthForms empties the log-in and register forms: once logged in, no
// name or password stays in them for whoever uses the browser next.
function clearAuthForms() {
  $('login-form').reset();
  $('reg-form').reset();
}

function chars(s) { return [...s].length; } // code points, as the server counts

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

const userHref = (name) => '#/u/' + encodeURIComponent(name || '');
const categoryHref = (name, category) => userHref(name) + '/category/' + encodeURIComponent(category);
const postHref = (id) => '#/post/' + encodeURIComponent(id);
// searchName is the name a person typed to find someone: spaces around it
// and a leading @ dropped, in lower case as every name is.
const searchName = (typed) => typed.trim().replace(/^@/, '').trim().toLowerCase();

// imageGrid shows a post's images: each its preview (at most 640 px a side,
// preview_url in its record) linking to the original, one click away; an
// image stored before previews shows its original until the server gives
// it one.  Each is sized from its record before it loads, so the timeline
// does not jump; lazily loaded.
function imageGrid(images) {
  const grid = el('div', 'images n' + Math.min(images.length, limits.images_max));
  for (const im of images) {
    const url = '/media/' + encodeURIComponent(im.media);
    const a = el('a');
    a.href = url; a.target = '_blank'; a.rel = 'noopener';
    a.title = 'the full image' + (im.width > 0 ? ' (' + im.width + ' \u00d7 ' + im.height + ')' : '');
    const img = el('img');
    img.loading = 'lazy'; // before src, or the browser may already have started
    img.alt = im.alt || '';
    const w = im.preview_url ? im.preview_width : im.width, h = im.preview_url ? im.preview_height : im.height;
    if (w > 0 && h > 0) {
      img.width = w; img.height = h;
      img.style.aspectRatio = w + ' / ' + h;
    }
    img.src = im.preview_url && /^\/media\/[^/?#]+\/preview$/.test(im.preview_url) ? im.preview_url : url;
    a.append(img);
    grid.append(a);
  }
  return grid;
}

// ago says how long before now (ms) a time was: "now", "3 min", "2 h",
// "5 d", and from a week on its date (with the year if not now's).
function ago(ms, now) {
  const s = (now - ms) / 1000;
  if (s < 60) return 'now'; // a clock a little ahead of ours too
  if (s < 3600) return Math.floor(s / 60) + ' min';
  if (s < 86400) return Math.floor(s / 3600) + ' h';
  if (s < 7 * 86400) return Math.floor(s / 86400) + ' d';
  const d = new Date(ms), opts = { day: 'numeric', month: 'short' };
  if (d.getFullYear() !== new Date(now).getFullYear()) opts.year = 'numeric';
  return d.toLocaleDateString(undefined, opts);
}

// timeEl is a post's time: how long ago (refreshTimes keeps it so), the
// full date and time on hover.
function timeEl(ms) {
  const t = el('time');
  if (!Number.isFinite(ms)) return t;
  t.dateTime = new Date(ms).toISOString();
  t.title = new Date(ms).toLocaleString();
  t.dataset.ms = ms;
  t.textContent = ago(ms, Date.now());
  return t;
}

// refreshTimes brings every time shown up to date, as time passes.
function refreshTimes() {
  const now = Date.now();
  for (const t of document.querySelectorAll('time[data-ms]')) t.textContent = ago(Number(t.dataset.ms), now);
}

function postItem(p) {
  const li = el('li', 'post');
  li.dataset.id = p.id;
  const meta = el('div', 'meta');
  const who = el('a', 'author', '@' + (p.author_name || p.author));
  who.href = userHref(p.author_name);
  const when = el('a', 'when'); // the post's own page: its address is the one to share
  when.href = postHref(p.id);
  when.title = 'this post on its own';
  when.append(timeEl(p.time));
  meta.append(who, when);
  if (p.category) {
    const chip = el('a', 'chip', p.category);
    chip.href = categoryHref(p.author_name, p.category);
    chip.title = 'posts of @' + (p.author_name || p.author) + ' in ' + p.category;
    meta.append(chip);
  }
  if (state.me && p.author_name === state.me) {
    const del = el('button', 'del', 'delete');
    del.type = 'button';
    del.onclick = async () => {
      try {
        await api('DELETE', '/posts/' + p.id);
        li.remove();
        if (!$('view-post').hidden) $('post-gone').hidden = false; // its own page: now gone
      } catch (e) { say(e.message); }
    };
    meta.append(del);
  }
  li.append(meta);
  if (p.title) li.append(el('h3', 'title', p.title));
  if (p.text) li.append(el('div', 'text', p.text));
  if (p.images && p.images.length) li.append(imageGrid(p.images));
  return li;
}

// A paged list: load(cursor) returns {items, next}; render(item) an <li>.
// page(true) starts again from the first page, page.reset() empties the
// list; either drops a page still on its way (it belongs to what was shown).
// page() resolves to true once its page is shown, false if it was dropped.
function pager(listId, moreId, emptyId, load, render) {
  let next = null, gen = 0;
  function reset() {
    gen++; next = null;
    $(listId).replaceChildren();
    $(moreId).hidden = true; $(emptyId).hidden = true;
  }
  async function page(first) {
    if (first) reset();
    const mine = gen;
    try {
      const r = await load(next);
      if (mine !== gen) return false;
      for (const it of r.items) $(listId).append(render(it));
      next = r.next || null;
      $(moreId).hidden = !next;
      $(emptyId).hidden = $(listId).children.length > 0;
      return true;
    } catch (e) { if (mine === gen) say(e.message); }
    return false;
  }
  $(moreId).onclick = () => page(false);
  page.reset = reset;
  return page;
}

function qs(params) {
  const q = Object.entries(params).filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v)).join('&');
  return q ? '?' + q : '';
}

const homePage = pager('home-list', 'home-more', 'home-empty', async (before) => {
  const r = await api('GET', '/home' + qs({ limit: 20, before }));
  return { items: r.posts || [], next: r.next };
}, postItem);

let userName = null, userCategory = null, userSeq = 0;
const userPage = pager('user-posts', 'user-more', 'user-empty', async (before) => {
  const r = await api('GET', '/users/' + encodeURIComponent(userName) + '/posts' +
    qs({ limit: 20, before, category: userCategory }));
  return { items: r.posts || [], next: r.next };
}, postItem);

let listName = null, listKind = null;
const listPage = pager('list-users', 'list-more', 'list-empty', async (after) => {
  const r = await api('GET', '/users/' + encodeURIComponent(listName) + '/' + listKind + qs({ limit: 50, after }));
  return { items: r.users || [], next: r.next };
}, (u) => {
  const li = el('li', 'user');
  const a = el('a', '', '@' + u.name);
  a.href = '#/u/' + encodeURIComponent(u.name);
  li.append(a);
  if (u.display) li.append(' ', el('span', '', u.display));
  return li;
});

// clearProfile empties the user view: nothing of a profile shown before
// stays while another loads, or when it cannot (no such user).
function clearProfile() {
  $('user-counts').hidden = true;
  $('user-following').textContent = ''; $('user-followers').textContent = '';
  userPage.reset();
  profileEditor(null);
}

// profileHeading shows a profile's name, display name and bio.
function profileHeading(p) {
  $('user-name').textContent = '@' + p.name + (p.display ? ' (' + p.display + ')' : '');
  $('user-bio').textContent = p.bio || '';
}

// showUser shows NAME's profile and posts: all of them, or those of category.
async function showUser(name, category) {
  userName = name; userCategory = category || null;
  const seq = ++userSeq; // a profile opened after this one wins
  show('user');
  clearProfile();
  $('user-filter').hidden = !userCategory;
  $('user-filter-cat').textContent = userCategory || '';
  $('user-filter-all').href = userHref(name);
  $('user-empty').textContent = userCategory ? 'No posts in this category.' : 'No posts yet.';
  $('user-name').textContent = '@' + name;
  $('user-bio').textContent = '';
  $('follow-btn').hidden = true;
  $('block-btn').hidden = true;
  $('user-blocked').hidden = true;
  $('delete-account').hidden = !state.token || name !== state.me; // one's own page only
  $('delete-form').hidden = true; $('delete-open').hidden = false; $('delete-pass').value = '';
  try {
    const p = await api('GET', '/users/' + encodeURIComponent(name));
    if (seq !== userSeq) return;
    profileHeading(p);
    profileEditor(p);
    $('user-following').textContent = p.following;
    $('user-followers').textContent = p.followers;
    $('user-following-link').href = '#/u/' + encodeURIComponent(name) + '/following';
    $('user-fans-link').href = '#/u/' + encodeURIComponent(name) + '/fans';
    const btn = $('follow-btn');
    btn.hidden = !state.token || name === state.me;
    btn.textContent = p.followed ? 'Unfollow' : 'Follow';
    btn.dataset.followed = p.followed ? '1' : '0';
    // a block either way: no follow (the server refuses it), and the page says why
    btn.hidden = btn.hidden || p.blocking || p.blocked_by;
    const block = $('block-btn');
    block.hidden = !state.token || name === state.me;
    block.textContent = p.blocking ? 'Unblock' : 'Block';
    block.dataset.blocking = p.blocking ? '1' : '0';
    $('user-blocked').textContent = p.blocking ? 'You block @' + p.name + ': neither of you sees the other\'s posts.'
      : p.blocked_by ? '@' + p.name + ' blocks you.' : '';
    $('user-blocked').hidden = !p.blocking && !p.blocked_by;
    $('user-counts').hidden = false;
  } catch (e) {
    if (seq === userSeq) { clearProfile(); say(e.message); }
    return;
  }
  await userPage(true);
}

// The profile editor, on one's own profile: display name and bio, checked
// with the server's rules (limits, and no control characters: C0, DEL, C1;
// a bio may hold tabs and line ends) before PATCH /api/v1/me is sent.
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;
const BIO_CONTROL_RE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const utf8Bytes = (s) => new TextEncoder().encode(s).length;
const editor = { profile: null, saving: false };

// profileEditor offers the editor when p is one's own profile (null: none).
function profileEditor(p) {
  editor.profile = p;
  $('profile-edit').hidden = !(p && state.token && p.name === state.me);
  $('edit-form').hidden = true; $('edit-open').hidden = false;
}

// editValues is what Save would send: both fields, white space around them dropped.
const editValues = () => ({ display: $('edit-display').value.trim(), bio: $('edit-bio').value.trim() });

// editProblems says what of display and bio the server would refuse ('': nothing).
function editProblems(display, bio) {
  const dn = chars(display), bn = utf8Bytes(bio);
  return {
    display: dn > limits.display_max ? 'Display name: at most ' + limits.display_max + ' characters (' + dn + ' now).'
      : CONTROL_RE.test(display) ? 'Display name: no control characters.' : '',
    bio: bn > limits.bio_max ? 'Bio: at most ' + limits.bio_max + ' bytes (' + bn + ' now: an accented letter takes 2, an emoji 4).'
      : BIO_CONTROL_RE.test(bio) ? 'Bio: no control characters but tabs and line ends.' : '',
  };
}

// editCheck marks the fields the server would refuse, says why under the
// form and counts the bio's bytes left; true if Save may send them.
function editCheck() {
  const v = editValues(), why = editProblems(v.display, v.bio);
  for (const f of ['display', 'bio']) {
    $('edit-' + f).classList.toggle('bad', why[f] !== '');
    $('edit-' + f).setAttribute('aria-invalid', why[f] ? 'true' : 'false');
  }
  const problems = [why.display, why.bio].filter(Boolean).join(' ');
  $('edit-hint').textContent = problems; $('edit-hint').hidden = !problems;
  const left = limits.bio_max - utf8Bytes(v.bio);
  $('edit-count').textContent = left + ' bytes left in the bio';
  $('edit-count').classList.toggle('over', left < 0);
  $('edit-save').disabled = editor.saving || problems !== '';
  return !problems;
}
for (const id of ['edit-display', 'edit-bio']) $(id).oninput = editCheck;

$('edit-open').onclick = () => {
  $('edit-display').value = editor.profile.display || '';
  $('edit-bio').value = editor.profile.bio || '';
  $('edit-open').hidden = true; $('edit-form').hidden = false;
  editCheck();
  $('edit-display').focus();
};
$('edit-cancel').onclick = () => profileEditor(editor.profile);

// Save: the profile the server answers is shown; its refusal stays under the form.
$('edit-form').onsubmit = async (ev) => {
  ev.preventDefault();
  if (editor.saving) return;
  if (!editCheck()) { say($('edit-hint').textContent); return; }
  editor.saving = true; $('edit-save').disabled = true;
  try {
    const p = await api('PATCH', '/me', editValues());
    profileHeading(p);
    profileEditor(p);
    say('Profile saved.', true);
  } catch (e) {
    const why = 'Not saved: ' + e.message + (e.code ? ' (' + e.code + ')' : '');
    $('edit-hint').textContent = why; $('edit-hint').hidden = false;
    say(why);
  }
  editor.saving = false; $('edit-save').disabled = false;
};

// showPost shows one post on its own (GET /api/v1/posts/ID: anyone may read
// it), or says it is not there (deleted, or an id never issued).
async function showPost(id) {
  show('post');
  $('post-one').replaceChildren();
  $('post-gone').hidden = true;
  $('post-back').textContent = state.token ? 'Back to your home' : 'Log in or register';
  if (!/^[0-9]{1,20}$/.test(id || '')) { $('post-gone').hidden = false; return; }
  try {
    const p = await api('GET', '/posts/' + id);
    $('post-one').append(postItem(p));
  } catch (e) {
    if (e.status === 404 || e.status === 400) $('post-gone').hidden = false;
    else say(e.message);
  }
}

async function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'post') { await showPost(parts[1]); return; } // shared: no login needed
  if (!state.token) { show('auth'); return; }
  if (parts[0] === 'u' && parts[1]) {
    if (parts[2] === 'following' || parts[2] === 'fans') {
      listName = parts[1]; listKind = parts[2];
      show('list');
      $('list-title').textContent = parts[2] === 'fans' ? 'Fans of @' + parts[1] : '@' + parts[1] + ' follows';
      await listPage(true);
    } else {
      await showUser(parts[1], parts[2] === 'category' ? parts[3] : null);
    }
    return;
  }
  show('home');
  $('suggest').hidden = true;
  // only the home shown now decides (a route run again meanwhile drops this one's page)
  if (await homePage(true) && $('home-list').children.length === 0 && !$('view-home').hidden) {
    await showSuggestions();
  }
}

// showSuggestions lists whom to follow under an empty home: the accounts
// the people one follows follow, then the most followed; each with a
// Follow button.
async function showSuggestions() {
  let r;
  try { r = await api('GET', '/me/suggestions'); } catch (e) { say(e.message); return; }
  $('suggest-list').replaceChildren(...(r.users || []).map(suggestionItem));
  $('suggest').hidden = !(r.users && r.users.length);
}

function suggestionItem(u) {
  const li = el('li', 'user suggestion');
  const a = el('a', '', '@' + u.name);
  a.href = userHref(u.name);
  li.append(a);
  if (u.display) li.append(el('span', '', u.display));
  const why = u.followed_by > 0 ? 'followed by ' + u.followed_by + ' you follow' : 'popular on Warble';
  li.append(el('span', 'why grow', why));
  const btn = el('button', 'follow', 'Follow');
  btn.type = 'button';
  btn.onclick = async () => {
    btn.disabled = true;
    try {
      await api('PUT', '/me/following/' + encodeURIComponent(u.name));
      btn.textContent = 'Following';
      await homeAfterFollow();
    } catch (e) { say(e.message); btn.disabled = false; }
  };
  li.append(btn);
  return li;
}

// homeAfterFollow reloads the home until the new follow's posts are in it:
// the server copies them in just after it answers, so a few tries, bounded.
async function homeAfterFollow() {
  for (let i = 0; i < 6; i++) {
    const shown = await homePage(true);
    if ((shown && $('home-list').children.length > 0) || $('view-home').hidden) return;
    await new Promise((r) => setTimeout(r, 250 * (i + 1)));
  }
}

async function login(name, password) {
  const r = await api('POST', '/sessions', { name, password });
  remember(r.token, r.name || name);
  clearAuthForms();
}

$('login-form').onsubmit = async (ev) => {
  ev.preventDefault();
  try { await login($('login-name').value.trim(), $('login-pass').value); say(''); location.hash = '#/'; route(); }
  catch (e) { say(e.message); }
};

$('reg-form').onsubmit = async (ev) => {
  ev.preventDefault();
  const name = $('reg-name').value.trim(), password = $('reg-pass').value;
  try {
    await api('POST', '/users', { name, password });
    await login(name, password);
    say('Welcome, @' + name + '!', true);
    location.hash = '#/'; route();
  } catch (e) { say(e.message); }
};

$('logout-btn').onclick = async () => {
  try { await api('DELETE', '/sessions'); } catch (e) { /* gone anyway */ }
  forget(); clearAuthForms(); clearCompose(); say(''); location.hash = '#/'; route();
};

// The compose form.  compose.picked holds the chosen images, in order:
// {file, url (an object URL for the preview), li, alt (its input), err,
// media and info (the upload's reply, once uploaded: a failed post keeps
// them, so trying again does not upload the same file twice)}.
const compose = { picked: [], posting: false };

// composeCheck checks the title, category and alt texts with the server's
// rules, marks what is wrong and says why under the form; true if all hold.
function composeCheck() {
  const problems = [];
  const mark = (input, bad, why) => {
    input.classList.toggle('bad', bad);
    input.setAttribute('aria-invalid', bad ? 'true' : 'false');
    if (bad) problems.push(why);
  };
  const text = $('post-text').value;
  mark($('post-text'), text !== '' && BLANK_RE.test(text) && compose.picked.length === 0,
    'Text: only white space shows nothing: write something, or add an image.');
  const title = chars($('post-title').value.trim());
  mark($('post-title'), title > limits.title_max, 'Title: at most ' + limits.title_max + ' characters (' + title + ' now).');
  const cat = $('post-category').value.trim();
  mark($('post-category'), cat !== '' && !CATEGORY_RE.test(cat),
    'Category: 1-32 of a-z, 0-9 and _ (no capitals or spaces).');
  compose.picked.forEach((it, i) => {
    const n = chars(it.alt.value.trim());
    mark(it.alt, n > limits.alt_max, 'Alt text of image ' + (i + 1) + ': at most ' + limits.alt_max + ' characters (' + n + ' now).');
  });
  $('post-hint').textContent = problems.join(' ');
  $('post-hint').hidden = problems.length === 0;
  return problems.length === 0;
}

function updateCount() {
  const left = limits.text_max - chars($('post-text').value);
  $('post-count').textContent = left;
  $('post-count').classList.toggle('over', left < 0);
  const ok = composeCheck();
  // text may be empty (or blank) only with an image
  const empty = BLANK_RE.test($('post-text').value) && compose.picked.length === 0;
  $('post-btn').disabled = compose.posting || !ok || left < 0 || empty;
  const full = compose.picked.length >= limits.images_max;
  $('post-images').disabled = full;
  $('post-pick').classList.toggle('full', full);
}
for (const id of ['post-text', 'post-title', 'post-category']) $(id).oninput = updateCount;

function addPicked(file) {
  const it = { file, url: URL.createObjectURL(file), media: null, info: null };
  it.li = el('li', 'preview');
  const img = el('img');
  img.src = it.url; img.alt = 'preview of ' + file.name;
  const fields = el('div', 'fields');
  it.alt = el('input', 'alt');
  it.alt.placeholder = 'Describe the image (alt text)';
  it.alt.setAttribute('aria-label', 'alt text of ' + file.name);
  it.alt.oninput = updateCount;
  it.err = el('span', 'err');
  it.err.hidden = true;
  fields.append(el('span', 'name', file.name), it.alt, it.err);
  const rm = el('button', 'remove', '\u00d7');
  rm.type = 'button'; rm.title = 'Remove this image';
  rm.setAttribute('aria-label', 'remove ' + file.name);
  rm.onclick = () => { removePicked(it); updateCount(); };
  it.li.append(img, fields, rm);
  compose.picked.push(it);
  $('post-previews').append(it.li);
}

function removePicked(it) {
  URL.revokeObjectURL(it.url);
  it.li.remove();
  compose.picked = compose.picked.filter((x) => x !== it);
}

// sizeText is a byte count as people read it: 3.2 MiB, 293 KiB, 900 bytes.
function sizeText(n) {
  if (n >= 1 << 20) return +(n / (1 << 20)).toFixed(1) + ' MiB';
  return n >= 1024 ? Math.round(n / 1024) + ' KiB' : n + ' bytes';
}

// tooLarge says why file f is refused before it is sent: the server takes
// images of at most media_max bytes (exact counts when rounding hides it).
function tooLarge(f) {
  let is = sizeText(f.size), max = sizeText(limits.media_max);
  if (is === max) { is = f.size + ' bytes'; max = limits.media_max + ' bytes'; }
  return f.name + ' is ' + is + ': an image may be at most ' + max;
}

$('post-images').onchange = async () => {
  const input = $('post-images'), files = [...input.files], refused = [];
  input.value = ''; // choosing the same file again fires change again
  await limitsLoaded;
  for (const f of files) {
    if (f.type && !IMAGE_TYPES.includes(f.type)) refused.push(f.name + ' is not a PNG, JPEG, GIF or WebP image');
    else if (f.size > limits.media_max) refused.push(tooLarge(f));
    else if (compose.picked.length >= limits.images_max) refused.push(f.name + ' not added: at most ' + limits.images_max + ' images a post');
    else addPicked(f);
  }
  say(refused.join('; '));
  updateCount();
};

function setPosting(on) {
  compose.posting = on;
  $('post-fields').disabled = on; // every input, the picker and the remove buttons
  $('post-btn').textContent = on ? 'Posting\u2026' : 'Post';
  updateCount();
}

function clearCompose() {
  for (const it of compose.picked.slice()) removePicked(it);
  $('post-text').value = ''; $('post-title').value = ''; $('post-category').value = '';
  updateCount();
}

// upload sends one picked image (POST /api/v1/media, the file as the body)
// unless an earlier try did; an error names the file and the server's code.
async function upload(it, i, n) {
  if (it.media) return;
  say('Uploading image ' + (i + 1) + ' of ' + n + '\u2026', true);
  try {
    it.info = await api('POST', '/media', it.file);
    it.media = it.info.media;
    it.err.hidden = true; it.li.classList.remove('failed');
  } catch (e) {
    const why = e.message + (e.code ? ' (' + e.code + ')' : '');
    it.err.textContent = 'Not uploaded: ' + why;
    it.err.hidden = false; it.li.classList.add('failed');
    throw new Error('Could not upload ' + it.file.name + ': ' + why);
  }
}

$('post-form').onsubmit = async (ev) => {
  ev.preventDefault();
  if (compose.posting) return;
  if (!composeCheck()) { say($('post-hint').textContent); return; }
  setPosting(true);
  try {
    const text = $('post-text').value, title = $('post-title').value.trim();
    const category = $('post-category').value.trim(), picked = compose.picked.slice();
    for (let i = 0; i < picked.length; i++) await upload(picked[i], i, picked.length);
    const body = {};
    if (text !== '') body.text = text;
    if (title) body.title = title;
    if (category) body.category = category;
    const images = picked.map((it) => {
      const alt = it.alt.value.trim();
      return {
        media: it.media, type: it.info.type, width: it.info.width, height: it.info.height, alt: alt || undefined,
        preview_url: '/media/' + encodeURIComponent(it.media) + '/preview',
        preview_width: it.info.preview_width, preview_height: it.info.preview_height,
      };
    });
    if (images.length) body.images = images.map((im) => ({ media: im.media, alt: im.alt }));
    const r = await api('POST', '/posts', body);
    clearCompose();
    $('home-list').prepend(postItem({
      id: r.id, time: r.time || Date.now(), text, title, category, images, author_name: state.me,
    }));
    $('home-empty').hidden = true;
    say('Posted.', true);
  } catch (e) { say(e.message); }
  setPosting(false);
};

$('refresh-btn').onclick = () => homePage(true);

$('follow-btn').onclick = async () => {
  const btn = $('follow-btn'), following = btn.dataset.followed === '1';
  btn.disabled = true;
  try {
    await api(following ? 'DELETE' : 'PUT', '/me/following/' + encodeURIComponent(userName));
    await showUser(userName, userCategory);
  } catch (e) { say(e.message); }
  btn.disabled = false;
};

// Block: the follows end both ways and each one's posts leave the other's
// home; Unblock lifts it (follows are not restored).
$('block-btn').onclick = async () => {
  const btn = $('block-btn'), blocking = btn.dataset.blocking === '1';
  btn.disabled = true;
  try {
    await api(blocking ? 'DELETE' : 'PUT', '/me/blocks/' + encodeURIComponent(userName));
    say(blocking ? 'Unblocked @' + userName + '.' : 'Blocked @' + userName + '.', true);
    await showUser(userName, userCategory);
  } catch (e) { say(e.message); }
  btn.disabled = false;
};

// Deleting one's account: the button opens a password field; the account
// goes only after a confirm, with the password (DELETE /api/v1/me).
$('delete-open').onclick = () => {
  $('delete-open').hidden = true; $('delete-form').hidden = false; $('delete-pass').focus();
};
$('delete-cancel').onclick = () => {
  $('delete-form').hidden = true; $('delete-open').hidden = false; $('delete-pass').value = '';
};
$('delete-form').onsubmit = async (ev) => {
  ev.preventDefault();
  const password = $('delete-pass').value;
  if (!confirm('Delete @' + state.me + ' and everything it posted? This cannot be undone.')) return;
  $('delete-btn').disabled = true;
  try {
    await api('DELETE', '/me', { password });
    const name = state.me;
    forget(); clearAuthForms(); clearCompose(); // as a log out: nothing of it stays in a form
    $('delete-pass').value = ''; $('delete-form').hidden = true; $('delete-open').hidden = false;
    history.replaceState(null, '', '#/'); // no hashchange: it would clear the message
    await route();
    say('@' + name + ' is deleted: its posts, images and follows are being erased.', true);
  } catch (e) {
    say(e.message + (e.status === 429 ? ' (too many tries)' : ''));
    $('delete-pass').value = '';
  }
  $('delete-btn').disabled = false;
};

$('user-search-form').onsubmit = (ev) => {
  ev.preventDefault();
  const name = searchName($('user-search').value);
  if (name) location.hash = '#/u/' + encodeURIComponent(name);
  $('user-search').value = '';
};

// loadLimits takes the server's limits (GET /api/v1/limits, no token);
// if it cannot, the defaults hold, and the server checks again anyway.
async function loadLimits() {
  try {
    const r = await fetch(API + '/limits');
    const got = r.ok ? await r.json() : {};
    for (const k of Object.keys(limits)) if (Number.isInteger(got[k]) && got[k] > 0) limits[k] = got[k];
  } catch (e) { /* the defaults */ }
  updateCount();
}
const limitsLoaded = loadLimits();

window.addEventListener('hashchange', () => { say(''); route(); });
setInterval(refreshTimes, 20000); // a time shown is at most 20 s behind
document.addEventListener('visibilitychange', () => { if (!document.hidden) refreshTimes(); });
updateCount();
route();
