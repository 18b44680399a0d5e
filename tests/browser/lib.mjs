// lib.mjs: what the browser tests share: headless Chromium, the HTTP API
// called from here for a test's setup, and a PNG made in memory.
import { chromium } from 'playwright-core';
import { deflateSync } from 'node:zlib';

// CHECK_MS bounds every wait for what a broken page would never show.
export const CHECK_MS = 10000;

// expect throws why unless ok.
export function expect(ok, why) { if (!ok) throw new Error(why); }

// until waits, bounded, for fn (run in the page, given arg) to hold; why names it.
export async function until(page, why, fn, arg) {
  try {
    await page.waitForFunction(fn, arg, { timeout: CHECK_MS });
  } catch (e) {
    throw new Error('never: ' + why);
  }
}

// launch starts headless Chromium: WARBLE_CHROMIUM, else Debian's.
export function launch() {
  return chromium.launch({
    executablePath: process.env.WARBLE_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    timeout: 60000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-quic', '--disable-dev-shm-usage'],
  });
}

// apiAt gives api(method, path, token, body), a call of base's HTTP API
// (JSON both ways); an error reply throws, naming the call and the reply.
export function apiAt(base) {
  return async function api(method, path, token, body) {
    const headers = { 'Content-Type': 'application/json' };
    if (token) headers.Authorization = 'Bearer ' + token;
    const res = await fetch(base + '/api/v1' + path, { method, headers, body: body && JSON.stringify(body) });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
    return data;
  };
}

// account registers name through api and logs it in: its session token.
export async function account(api, name, password) {
  await api('POST', '/users', null, { name, password });
  return (await api('POST', '/sessions', null, { name, password })).token;
}

// png(w, h) is an RGB PNG of w x h pixels: a colour gradient with a stripe.
export function png(w, h) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const len = Buffer.alloc(4), sum = Buffer.alloc(4);
    len.writeUInt32BE(data.length); sum.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; ihdr[9] = 2; // 8 bits per sample, RGB; compression, filter, interlace 0
  const raw = Buffer.alloc(h * (1 + 3 * w));
  for (let y = 0; y < h; y++) {
    const row = y * (1 + 3 * w); // filter byte 0 (none), then the pixels
    for (let x = 0; x < w; x++) {
      const stripe = Math.abs(x - y) < 4;
      raw[row + 1 + 3 * x] = stripe ? 255 : Math.round(255 * x / (w - 1));
      raw[row + 2 + 3 * x] = stripe ? 255 : 90;
      raw[row + 3 + 3 * x] = stripe ? 255 : Math.round(255 * y / (h - 1));
    }
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}
