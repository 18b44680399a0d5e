// Warble web page: a small single-page client of the HTTP/JSON API
// (docs/http-api.md).  Routes live in the URL hash:
//   #/                  home timeline (or log in / register)
//   #/u/NAME            a user's posts, counts, follow button
//   #/u/NAME/following  whom NAME follows;  #/u/NAME/fans  who follows NAME
'use strict';

const API = '/api/v1';
const MAX_CHARS = 280;
const $ = (id) => document.getElementById(id);
const state = { token: localStorage.getItem('warble.token'), me: localStorage.getItem('warble.name') };

async function api(method, path, body) {
  const headers = {};
  if (state.token) headers['Authorization'] = 'Bearer ' + state.token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(API + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = {};
  try { data = await res.json(); } catch (e) { /* empty body */ }
  if (!res.ok) {
    if (res.status === 401 && state.token && path !== '/sessions') { forget(); }
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
  for (const v of ['auth', 'home', 'user', 'list']) $('view-' + v).hidden = v !== view;
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

function postItem(p) {
  const li = el('li', 'post');
  li.dataset.id = p.id;
  const meta = el('div', 'meta');
  const who = el('a', 'author', '@' + (p.author_name || p.author));
  who.href = '#/u/' + encodeURIComponent(p.author_name || '');
  meta.append(who, el('time', '', new Date(p.time).toLocaleString()));
  if (state.me && p.author_name === state.me) {
    const del = el('button', 'del', 'delete');
    del.type = 'button';
    del.onclick = async () => {
      try { await api('DELETE', '/posts/' + p.id); li.remove(); } catch (e) { say(e.message); }
    };
    meta.append(del);
  }
  li.append(meta, el('div', 'text', p.text));
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

let userName = null;
const userPage = pager('user-posts', 'user-more', 'user-empty', async (before) => {
  const r = await api('GET', '/users/' + encodeURIComponent(userName) + '/posts' + qs({ limit: 20, before }));
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

async function showUser(name) {
  userName = name;
  show('user');
  $('user-name').textContent = '@' + name;
  $('user-bio').textContent = '';
  $('follow-btn').hidden = true;
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

async function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (!state.token) { show('auth'); return; }
  if (parts[0] === 'u' && parts[1]) {
    if (parts[2] === 'following' || parts[2] === 'fans') {
      listName = parts[1]; listKind = parts[2];
      show('list');
      $('list-title').textContent = parts[2] === 'fans' ? 'Fans of @' + parts[1] : '@' + parts[1] + ' follows';
      await listPage(true);
    } else {
      await showUser(parts[1]);
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

function updateCount() {
  const left = MAX_CHARS - chars($('post-text').value);
  $('post-count').textContent = left;
  $('post-count').classList.toggle('over', left < 0);
  $('post-btn').disabled = left < 0 || left === MAX_CHARS;
}
$('post-text').oninput = updateCount;

$('post-form').onsubmit = async (ev) => {
  ev.preventDefault();
  try {
    const text = $('post-text').value;
    const r = await api('POST', '/posts', { text });
    $('post-text').value = ''; updateCount();
    $('home-list').prepend(postItem({ id: r.id, time: r.time || Date.now(), text, author_name: state.me }));
    $('home-empty').hidden = true;
    say('Posted.', true);
  } catch (e) { say(e.message); }
};

$('refresh-btn').onclick = () => homePage(true);

$('follow-btn').onclick = async () => {
  const btn = $('follow-btn'), following = btn.dataset.followed === '1';
  btn.disabled = true;
  try {
    await api(following ? 'DELETE' : 'PUT', '/me/following/' + encodeURIComponent(userName));
    await showUser(userName);
  } catch (e) { say(e.message); }
  btn.disabled = false;
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
