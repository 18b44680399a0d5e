// Warble web page: a small single-page client of the HTTP/JSON API
// (docs/http-api.md).  Routes live in the URL hash:
//   #/                  home timeline (or log in / register)
//   #/u/NAME            a user's posts, counts, follow button (one's own: delete account)
//   #/u/NAME/category/C NAME's posts in category C (?category=C)
//   #/u/NAME/following  whom NAME follows;  #/u/NAME/fans  who follows NAME
//   #/post/ID           one post on its own: the address to share (logged in or not)
'use strict';

const API = '/api/v1';
const MAX_CHARS = 280;
// The limits of a post (docs/http-api.md): title and alt text in code
// points, as the server counts them; at most 4 images of these types.
const MAX_TITLE = 100, MAX_ALT = 1000, MAX_IMAGES = 4;
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
// message, its code (the JSON "error") and the HTTP status.
async function api(method, path, body) {
  const headers = {};
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
    // a session that no longer holds; a wrong password (BAD_CREDENTIALS) keeps it
    if (res.status === 401 && state.token && path !== '/sessions' && data.error !== 'BAD_CREDENTIALS') { forget(); }
    const err = new Error(data.message || res.statusText);
    err.code = data.error; err.status = res.status;
    throw err;
  }
  return data;
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

// imageGrid shows a post's images: each its preview (at most 640 px a side,
// preview_url in its record) linking to the original, one click away; an
// image stored before previews shows its original until the server gives
// it one.  Each is sized from its record before it loads, so the timeline
// does not jump; lazily loaded.
function imageGrid(images) {
  const grid = el('div', 'images n' + Math.min(images.length, MAX_IMAGES));
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

function postItem(p) {
  const li = el('li', 'post');
  li.dataset.id = p.id;
  const meta = el('div', 'meta');
  const who = el('a', 'author', '@' + (p.author_name || p.author));
  who.href = userHref(p.author_name);
  const when = el('a', 'when'); // the post's own page: its address is the one to share
  when.href = postHref(p.id);
  when.title = 'this post on its own';
  when.append(el('time', '', new Date(p.time).toLocaleString()));
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
function pager(listId, moreId, emptyId, load, render) {
  let next = null;
  async function page(first) {
    if (first) { $(listId).replaceChildren(); next = null; }
    try {
      const r = await load(next);
      for (const it of r.items) $(listId).append(render(it));
      next = r.next || null;
      $(moreId).hidden = !next;
      $(emptyId).hidden = $(listId).children.length > 0;
    } catch (e) { say(e.message); }
  }
  $(moreId).onclick = () => page(false);
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

let userName = null, userCategory = null;
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

// showUser shows NAME's profile and posts: all of them, or those of category.
async function showUser(name, category) {
  userName = name; userCategory = category || null;
  show('user');
  $('user-filter').hidden = !userCategory;
  $('user-filter-cat').textContent = userCategory || '';
  $('user-filter-all').href = userHref(name);
  $('user-empty').textContent = userCategory ? 'No posts in this category.' : 'No posts yet.';
  $('user-name').textContent = '@' + name;
  $('user-bio').textContent = '';
  $('follow-btn').hidden = true;
  $('delete-account').hidden = !state.token || name !== state.me; // one's own page only
  $('delete-form').hidden = true; $('delete-open').hidden = false; $('delete-pass').value = '';
  try {
    const p = await api('GET', '/users/' + encodeURIComponent(name));
    $('user-name').textContent = '@' + p.name + (p.display ? ' (' + p.display + ')' : '');
    $('user-bio').textContent = p.bio || '';
    $('user-following').textContent = p.following;
    $('user-followers').textContent = p.followers;
    $('user-following-link').href = '#/u/' + encodeURIComponent(name) + '/following';
    $('user-fans-link').href = '#/u/' + encodeURIComponent(name) + '/fans';
    const btn = $('follow-btn');
    btn.hidden = !state.token || name === state.me;
    btn.textContent = p.followed ? 'Unfollow' : 'Follow';
    btn.dataset.followed = p.followed ? '1' : '0';
  } catch (e) { say(e.message); return; }
  await userPage(true);
}

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
  await homePage(true);
}

async function login(name, password) {
  const r = await api('POST', '/sessions', { name, password });
  remember(r.token, r.name || name);
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
  forget(); say(''); location.hash = '#/'; route();
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
  mark($('post-title'), title > MAX_TITLE, 'Title: at most ' + MAX_TITLE + ' characters (' + title + ' now).');
  const cat = $('post-category').value.trim();
  mark($('post-category'), cat !== '' && !CATEGORY_RE.test(cat),
    'Category: 1-32 of a-z, 0-9 and _ (no capitals or spaces).');
  compose.picked.forEach((it, i) => {
    const n = chars(it.alt.value.trim());
    mark(it.alt, n > MAX_ALT, 'Alt text of image ' + (i + 1) + ': at most ' + MAX_ALT + ' characters (' + n + ' now).');
  });
  $('post-hint').textContent = problems.join(' ');
  $('post-hint').hidden = problems.length === 0;
  return problems.length === 0;
}

function updateCount() {
  const left = MAX_CHARS - chars($('post-text').value);
  $('post-count').textContent = left;
  $('post-count').classList.toggle('over', left < 0);
  const ok = composeCheck();
  // text may be empty (or blank) only with an image
  const empty = BLANK_RE.test($('post-text').value) && compose.picked.length === 0;
  $('post-btn').disabled = compose.posting || !ok || left < 0 || empty;
  const full = compose.picked.length >= MAX_IMAGES;
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

$('post-images').onchange = () => {
  const input = $('post-images'), files = [...input.files], refused = [];
  input.value = ''; // choosing the same file again fires change again
  for (const f of files) {
    if (f.type && !IMAGE_TYPES.includes(f.type)) refused.push(f.name + ' is not a PNG, JPEG, GIF or WebP image');
    else if (compose.picked.length >= MAX_IMAGES) refused.push(f.name + ' not added: at most ' + MAX_IMAGES + ' images a post');
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
    forget();
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
  const name = $('user-search').value.trim();
  if (name) location.hash = '#/u/' + encodeURIComponent(name);
  $('user-search').value = '';
};

window.addEventListener('hashchange', () => { say(''); route(); });
updateCount();
route();
