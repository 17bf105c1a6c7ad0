// Plaza's service worker (served at /sw.js?v=<asset version>, scope /):
// - keeps the app shell (styles, scripts, icons of this version) for offline use;
// - keeps the feed pages read last (network first, the copy when the network fails), so they
//   stay readable offline; the copies are one person's, dropped at sign-out and as soon as a
//   page comes for someone else (the `Plaza-Viewer` header);
// - shows pushes and opens the page a push is about when it is tapped.
const version = new URL(self.location).searchParams.get('v') || 'dev';
const shellCache = `plaza-shell-${version}`;
const pageCache = 'plaza-pages';
const keptPages = 30;
const shell = ['plaza.css', 'app.js', 'compose.js', 'post.js', 'settings.js', 'crop.js', 'icon.svg', 'icon-192.png']
  .map((name) => `/assets/${name}?v=${version}`);

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(shellCache);
    await cache.addAll(shell);
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith('plaza-shell-') && name !== shellCache) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

// Pages the copies are kept of: the feeds and what they link to (posts, profiles, spaces,
// collections), not settings, administration, notifications, history, search, sign-in or forms.
const keptPaths = [/^\/$/, /^\/explore$/, /^\/spaces$/, /^\/s\/[^/]+$/, /^\/p\/\d+$/, /^\/u\/[^/]+$/,
  /^\/collections(\/\d+)?$/];
function keepsCopy(url) {
  return url.origin === self.location.origin && keptPaths.some((path) => path.test(url.pathname));
}

// The copies are one person's: a page for someone else (another account, or signed out) drops them.
const viewerKey = '/__plaza_viewer';
async function remember(request, response) {
  const viewer = response.headers.get('Plaza-Viewer') || 'anonymous';
  const cache = await caches.open(pageCache);
  const last = await cache.match(viewerKey);
  if (!last || (await last.text()) !== viewer) {
    await caches.delete(pageCache);
    const fresh = await caches.open(pageCache);
    await fresh.put(viewerKey, new Response(viewer));
    if (viewer === 'anonymous') return;
    await fresh.put(request, response);
    return;
  }
  if (viewer === 'anonymous') return;
  await cache.put(request, response);
  const keys = (await cache.keys()).filter((key) => new URL(key.url).pathname !== viewerKey);
  for (const old of keys.slice(0, Math.max(0, keys.length - keptPages))) await cache.delete(old);
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname.startsWith('/assets/')) {
    event.respondWith((async () => (await caches.match(request)) || fetch(request))());
    return;
  }
  if (request.mode !== 'navigate') return;
  event.respondWith((async () => {
    try {
      const response = await fetch(request);
      // Every page says whose it is; only feed pages are kept.
      if (response.type === 'basic' && response.headers.has('Plaza-Viewer')) {
        const copy = response.ok && keepsCopy(url) ? response.clone() : new Response('', { headers: response.headers });
        event.waitUntil(keepsCopy(url) && response.ok ? remember(request, copy) : forgetIfOtherViewer(copy));
      }
      return response;
    } catch (error) {
      const copy = keepsCopy(url) ? await caches.match(request, { cacheName: pageCache }) : null;
      if (copy) return copy;
      return new Response(
        '<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        + '<title>Offline · Plaza</title><p>You are offline, and this page was not read here before.</p>'
        + '<p><a href="/">The home page as last read</a></p>',
        { status: 503, headers: { 'Content-Type': 'text/html; charset=utf-8' } });
    }
  })());
});

async function forgetIfOtherViewer(response) {
  const viewer = response.headers.get('Plaza-Viewer') || 'anonymous';
  const last = await caches.match(viewerKey, { cacheName: pageCache });
  if (last && (await last.text()) !== viewer) await caches.delete(pageCache);
}

self.addEventListener('push', (event) => {
  let data = {};
  try { data = event.data ? event.data.json() : {}; } catch { data = { body: event.data ? event.data.text() : '' }; }
  const title = data.title || 'Plaza';
  event.waitUntil((async () => {
    await self.registration.showNotification(title, {
      body: data.body || '',
      tag: data.tag,
      renotify: Boolean(data.tag),
      icon: `/assets/icon-192.png?v=${version}`,
      badge: `/assets/icon-192.png?v=${version}`,
      data: { url: data.url || '/notifications' },
    });
    if ('setAppBadge' in navigator && typeof data.badge === 'number') {
      try { await navigator.setAppBadge(data.badge); } catch { /* not allowed here */ }
    }
  })());
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const path = (event.notification.data && event.notification.data.url) || '/notifications';
  const target = new URL(path, self.location.origin);
  if (target.origin !== self.location.origin) return;
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    for (const client of windows) {
      if (new URL(client.url).pathname === target.pathname && 'focus' in client) return client.focus();
    }
    for (const client of windows) {
      if ('navigate' in client) {
        await client.focus();
        return client.navigate(target.href);
      }
    }
    return self.clients.openWindow(target.href);
  })());
});
