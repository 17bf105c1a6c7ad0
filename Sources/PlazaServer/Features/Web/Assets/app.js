// Plaza's web app: progressive enhancement of the server-rendered pages. Reading works
// without this file; with it, actions go through the JSON API (cookie session plus the
// page's CSRF token), lists grow as you scroll, and the realtime stream keeps pages live.

const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? '';

// Texts in the page's language: the layout carries this script's translations as JSON, keyed
// by the English text (English needs none). `{name}` takes `values.name`.
const lang = document.documentElement.lang || 'en';
const messages = JSON.parse(document.getElementById('plaza-messages')?.textContent || '{}');
const fillIn = (text, values) => text.replace(/\{(\w+)\}/g, (all, name) => (name in values ? String(values[name]) : all));
export function t(text, values = {}) {
  const translated = messages[text];
  return fillIn(typeof translated === 'string' ? translated : text, values);
}
/** The plural form for `count` (`{count}` is the number as the language writes it). */
const pluralRules = new Intl.PluralRules(lang);
export function plural(count, one, other, values = {}) {
  const forms = messages[other];
  const english = count === 1 ? one : other;
  const text = typeof forms === 'object' ? forms[pluralRules.select(count)] ?? forms.other ?? english : english;
  return fillIn(text, { ...values, count: new Intl.NumberFormat(lang).format(count) });
}

/** Calls the JSON API; throws an Error carrying the server's message and field. */
export async function api(method, path, body) {
  const headers = { 'X-CSRF-Token': csrf, Accept: 'application/json' };
  const init = { method, headers, credentials: 'same-origin' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new Error(t('Could not reach Plaza. Check your connection and try again.'));
  }
  const text = await response.text();
  let data = null;
  if (text) { try { data = JSON.parse(text); } catch { /* not JSON */ } }
  if (!response.ok) {
    const error = new Error(data?.error?.message ?? t('Something went wrong ({status}).', { status: response.status }));
    error.field = data?.error?.field;
    throw error;
  }
  return data;
}

/** Uploads a photo or video to /me/media, reporting progress on a <progress> element. */
// `fields`: the form's other fields (`description`, the alt text).
export function upload(file, progress, fields = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/v1/me/media');
    xhr.setRequestHeader('X-CSRF-Token', csrf);
    xhr.setRequestHeader('Accept', 'application/json');
    if (progress) {
      progress.hidden = false;
      progress.value = 0;
      xhr.upload.onprogress = (e) => { if (e.lengthComputable) progress.value = Math.round((100 * e.loaded) / e.total); };
    }
    xhr.onload = () => {
      let data = null;
      try { data = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status >= 200 && xhr.status < 300) { if (progress) progress.value = 100; resolve(data); }
      else reject(new Error(data?.error?.message ?? t('The upload failed ({status}).', { status: xhr.status })));
    };
    xhr.onerror = () => reject(new Error(t('The upload failed: Plaza could not be reached.')));
    const form = new FormData();
    form.append('file', file);
    Object.entries(fields).forEach(([name, value]) => { if (value) form.append(name, value); });
    xhr.send(form);
  });
}

export function toast(message) {
  const box = document.getElementById('toast');
  if (!box) return;
  box.textContent = message;
  box.classList.add('show');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => box.classList.remove('show'), 3000);
}

/** Marks an element busy (disabled, aria-busy) while `work` runs. */
export async function busy(element, work) {
  if (element.getAttribute('aria-busy') === 'true') return undefined;
  const buttons = element.matches('form') ? [...element.querySelectorAll('button')] : [element];
  element.setAttribute('aria-busy', 'true');
  // A disabled button loses keyboard focus, so the focused one is only marked aria-disabled.
  const mark = (b, on) => { if (b === document.activeElement) b.setAttribute('aria-disabled', String(on)); else b.disabled = on; };
  buttons.forEach((b) => mark(b, true));
  try { return await work(); } finally {
    element.removeAttribute('aria-busy');
    buttons.forEach((b) => { b.disabled = false; b.removeAttribute('aria-disabled'); });
  }
}

export function showError(element, error) {
  const box = (element.matches('form') ? element : element.closest('form, section, li, article'))?.querySelector('.error[role="alert"]');
  if (box) { box.textContent = error.message; box.hidden = false; } else toast(error.message);
  const field = error.field && element.matches('form') ? element.querySelector(`[name="${CSS.escape(error.field)}"]`) : null;
  if (field) { field.setAttribute('aria-invalid', 'true'); field.focus(); }
}

function clearError(form) {
  const box = form.querySelector('.error[role="alert"]');
  if (box) { box.hidden = true; box.textContent = ''; }
  form.querySelectorAll('[aria-invalid]').forEach((f) => f.removeAttribute('aria-invalid'));
}

/** A form's fields as JSON: dotted names nest, `data-number` and ranges are numbers,
 *  `data-days-ahead` a number of days from now as a timestamp, repeated checkboxes are arrays.
 *  Empty fields are left out, or null on PATCH (clears). */
export function formJSON(form, method) {
  const body = {};
  const set = (path, value) => {
    const keys = path.split('.');
    let target = body;
    keys.slice(0, -1).forEach((k) => { target = target[k] ??= {}; });
    target[keys.at(-1)] = value;
  };
  const checkboxes = {};
  for (const el of form.elements) {
    if (!el.name || el.name === '_csrf' || el.type === 'file' || el.disabled) continue;
    // `data-bool` checkboxes are one true/false field; others are lists of their checked values.
    if (el.type === 'checkbox' && 'bool' in el.dataset) { set(el.name, el.checked); continue; }
    if (el.type === 'checkbox') { (checkboxes[el.name] ??= []).push(el); continue; }
    if (el.type === 'radio' && !el.checked) continue;
    // Passwords are sent as typed; `data-keep-empty` fields send "" (which clears them) rather than null (which keeps them).
    const value = el.type === 'password' ? el.value : el.value.trim();
    // `data-lines`: a list of {text}, one a line (an empty field is an empty list).
    if ('lines' in el.dataset) { set(el.name, value.split('\n').map((l) => l.trim()).filter(Boolean).map((text) => ({ text }))); continue; }
    if (value === '') {
      if ('keepEmpty' in el.dataset) set(el.name, '');
      else if (method === 'PATCH') set(el.name, null);
      continue;
    }
    // `data-words`: a list of names, written "@bea cal, dan".
    if ('words' in el.dataset) { set(el.name, value.split(/[\s,]+/).map((w) => w.replace(/^@/, '')).filter(Boolean)); continue; }
    if ('daysAhead' in el.dataset) { set(el.name, new Date(Date.now() + Number(value) * 86400000).toISOString()); continue; }
    set(el.name, el.type === 'range' || el.type === 'number' || 'number' in el.dataset ? Number(value) : value);
  }
  for (const [name, boxes] of Object.entries(checkboxes)) set(name, boxes.filter((b) => b.checked).map((b) => b.value));
  const nullable = form.dataset.nullIfEmpty;
  if (nullable && !form.elements[nullable]?.value) set(nullable.split('.').slice(0, -1).join('.'), null);
  return body;
}

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, key) => encodeURIComponent(values?.[key] ?? ''));
}

async function after(element, then, data, body) {
  if (!then) return;
  const [action, ...rest] = then.split(':');
  const argument = rest.join(':');
  if (action === 'reload') location.reload();
  else if (action === 'go') location.assign(fill(argument, { ...body, ...data }));
  else if (action === 'remove') document.querySelector(argument)?.remove();
  else if (action === 'toast') toast(argument);
  else element.dispatchEvent(new CustomEvent(`plaza:${action}`, { bubbles: true, detail: data }));
  element.closest('dialog[open]')?.close();
  // A form that made something (POST: a comment, a report) is empty for the next; a form of
  // settings (PATCH, PUT) keeps what it saved, or saving it again would clear them. Passwords
  // never stay.
  if (element.matches('form') && action !== 'go' && action !== 'reload') {
    const made = element.dataset.api?.startsWith('POST ');
    const typed = made ? 'textarea, input[type=url], input[type=password], input[data-words]' : 'input[type=password]';
    element.querySelectorAll(typed).forEach((f) => { f.value = ''; });
  }
}

// `data-api="METHOD /path/{field}"` on a form or button: one JSON request, then `data-then`.
document.addEventListener('submit', async (event) => {
  const form = event.target.closest('form[data-api]');
  if (!form) return;
  event.preventDefault();
  const [method, template] = form.dataset.api.split(' ');
  const body = formJSON(form, method);
  clearError(form);
  await busy(form, async () => {
    try {
      // `data-upload-field="imageId"` on a file input: the file is uploaded first, its id sent in that field.
      for (const input of form.querySelectorAll('input[type=file][data-upload-field]')) {
        if (input.files[0]) body[input.dataset.uploadField] = (await upload(input.files[0], form.querySelector('[data-upload-progress]'))).id;
      }
      const path = template.replace(/\{(\w+)\}/g, (_, key) => { const value = body[key]; delete body[key]; return encodeURIComponent(value ?? ''); });
      await after(form, form.dataset.then, await api(method, path, body), body);
    } catch (error) { showError(form, error); }
  });
});

document.addEventListener('click', async (event) => {
  const button = event.target.closest('button[data-api]');
  if (!button) return;
  if (button.dataset.confirm && !confirm(button.dataset.confirm)) return;
  const [method, path] = button.dataset.api.split(' ');
  // `data-body`: a fixed JSON body (e.g. the role a button gives).
  const body = button.dataset.body ? JSON.parse(button.dataset.body) : undefined;
  await busy(button, async () => {
    try { await after(button, button.dataset.then, await api(method, path, body), {}); } catch (error) { showError(button, error); }
  });
});

// An invite link just made: shown, to copy (the list has it from the next visit).
document.addEventListener('plaza:invite', (event) => {
  const output = event.target.querySelector('[data-invite-url]');
  if (output) output.textContent = new URL(event.detail.url, location.origin).href;
  event.target.closest('section')?.querySelector('.empty')?.remove();
});

// A report for breaking the rules names which: the rules show, and are sent, with that reason only.
document.addEventListener('change', (event) => {
  if (event.target.name !== 'reason') return;
  const rules = event.target.form?.querySelector('[data-report-rules]');
  if (!rules) return;
  rules.hidden = event.target.value !== 'rules';
  rules.querySelectorAll('input').forEach((box) => { box.disabled = rules.hidden; });
});

// Plain forms (sign in, sign up): show that something is happening.
document.addEventListener('submit', (event) => {
  const form = event.target.closest('form[data-busy]');
  if (form) form.setAttribute('aria-busy', 'true');
});

// Likes, follows, joins.
document.addEventListener('click', async (event) => {
  const like = event.target.closest('[data-like]');
  const follow = event.target.closest('[data-follow]');
  const join = event.target.closest('[data-join]');
  const followTag = event.target.closest('[data-follow-tag]');
  const boost = event.target.closest('[data-boost]');
  if (!document.body.dataset.signedIn && (like || follow || join || followTag || boost)) {
    location.assign(`/login?next=${encodeURIComponent(location.pathname)}`);
    return;
  }
  if (like) {
    const liked = like.getAttribute('aria-pressed') === 'true';
    await busy(like, async () => {
      try {
        const state = await api(liked ? 'DELETE' : 'PUT', `/api/v1/posts/${like.dataset.like}/like`);
        setLikes(like.dataset.like, state.likes, state.liked);
      } catch (error) { toast(error.message); }
    });
  } else if (follow) {
    const following = follow.getAttribute('aria-pressed') === 'true';
    await busy(follow, async () => {
      try {
        const user = await api(following ? 'DELETE' : 'PUT', `/api/v1/users/${encodeURIComponent(follow.dataset.follow)}/follow`);
        // A locked person is asked, not followed: the button shows the pending request.
        const pressed = user.viewer.following || user.viewer.requested;
        follow.setAttribute('aria-pressed', String(pressed));
        follow.textContent = user.viewer.following ? t('Unfollow') : user.viewer.requested ? t('Requested') : t('Follow');
        follow.classList.toggle('primary', !pressed);
        // The profile's count of followers (the server's texts and a number: no markup from elsewhere).
        const followers = user.counts.followers;
        const count = document.querySelector('[data-followers]');
        if (count && document.querySelector('.profile [data-follow]') === follow) {
          count.innerHTML = plural(followers, '<strong>{count}</strong> follower', '<strong>{count}</strong> followers');
        }
      } catch (error) { toast(error.message); }
    });
  } else if (boost) {
    const boosted = boost.getAttribute('aria-pressed') === 'true';
    await busy(boost, async () => {
      try {
        const post = await api(boosted ? 'DELETE' : 'PUT', `/api/v1/posts/${boost.dataset.boost}/boost`);
        document.querySelectorAll(`[data-boost="${boost.dataset.boost}"]`).forEach((button) => {
          button.setAttribute('aria-pressed', String(post.viewer.boosted));
          button.querySelector('.count').textContent = numbers.format(post.counts.boosts);
          button.querySelector('[data-count-label]').textContent = ` ${plural(post.counts.boosts, '{count} boost', '{count} boosts')}`;
        });
      } catch (error) { toast(error.message); }
    });
  } else if (followTag) {
    const following = followTag.getAttribute('aria-pressed') === 'true';
    await busy(followTag, async () => {
      try {
        await api(following ? 'DELETE' : 'PUT', `/api/v1/hashtags/${encodeURIComponent(followTag.dataset.followTag)}/follow`);
        followTag.setAttribute('aria-pressed', String(!following));
        followTag.textContent = following ? t('Follow') : t('Unfollow');
        followTag.classList.toggle('primary', following);
      } catch (error) { toast(error.message); }
    });
  } else if (join) {
    const member = join.getAttribute('aria-pressed') === 'true';
    await busy(join, async () => {
      try {
        await api(member ? 'DELETE' : 'PUT', `/api/v1/spaces/${encodeURIComponent(join.dataset.join)}/membership`);
        location.reload();
      } catch (error) { toast(error.message); }
    });
  }
});

// A vote in a poll: the chosen options, then the page again with the results.
document.addEventListener('submit', async (event) => {
  const form = event.target.closest('form[data-poll]');
  if (!form) return;
  event.preventDefault();
  const choices = [...form.querySelectorAll('input[name=choice]:checked')].map((box) => Number(box.value));
  if (!choices.length) { toast(t('Choose an option first.')); return; }
  await busy(form, async () => {
    try {
      await api('POST', `/api/v1/posts/${form.dataset.poll}/poll/votes`, { choices });
      location.reload();
    } catch (error) { toast(error.message); }
  });
});

// Counts shown as a number beside a symbol, in the page's language, with what a screen reader reads.
const numbers = new Intl.NumberFormat(lang);
function setLikes(postId, likes, liked) {
  document.querySelectorAll(`[data-like="${postId}"]`).forEach((button) => {
    button.querySelector('.count').textContent = numbers.format(likes);
    const label = button.querySelector('[data-count-label]');
    if (label) label.textContent = ` ${plural(likes, '{count} like', '{count} likes')}`;
    if (liked !== undefined) button.setAttribute('aria-pressed', String(liked));
  });
}
function addComment(postId) {
  document.querySelectorAll(`#post-${postId} .comments-link`).forEach((link) => {
    const count = link.querySelector('.count');
    const comments = Number(count.dataset.count ?? count.textContent) + 1;
    count.dataset.count = comments;
    count.textContent = numbers.format(comments);
    const label = link.querySelector('[data-count-label]');
    if (label) label.textContent = ` ${'answers' in link.dataset ? plural(comments, '{count} answer', '{count} answers') : plural(comments, '{count} comment', '{count} comments')}`;
  });
}

// Relative times, in the reader's own time zone.
const relative = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' });
export function enhance(root = document) {
  root.querySelectorAll('time[datetime]').forEach((time) => {
    const date = new Date(time.dateTime);
    if (Number.isNaN(date.getTime())) return;
    time.title = date.toLocaleString(lang);
    const seconds = (date.getTime() - Date.now()) / 1000;
    const units = [['year', 31536000], ['month', 2592000], ['day', 86400], ['hour', 3600], ['minute', 60]];
    const [unit, size] = units.find(([, s]) => Math.abs(seconds) >= s) ?? ['second', 1];
    time.textContent = Math.abs(seconds) < 45 ? t('just now') : relative.format(Math.round(seconds / size), unit);
  });
  root.querySelectorAll('img[data-blurhash]').forEach(paintBlurhash);
  // The reader's preference: every content warning and sensitive photo open at once.
  if (document.body.dataset.expandWarnings !== undefined) {
    root.querySelectorAll('details[data-cw]').forEach((details) => { details.open = true; });
    root.querySelectorAll('input[data-reveal]').forEach((box) => { box.checked = true; });
  }
  root.querySelectorAll('[data-color]').forEach((el) => {
    if (/^#[0-9a-fA-F]{6}$/.test(el.dataset.color)) el.style.setProperty('--accent', el.dataset.color);
  });
  root.querySelectorAll('a[data-more]').forEach((link) => moreObserver.observe(link));
  root.querySelectorAll('[data-processing]').forEach(followProcessing);
  root.querySelectorAll('[data-carousel]').forEach(carousel);
}

// Placeholders: a picture's BlurHash painted behind it (at the size its width and height
// attributes already reserve) until it has loaded. https://blurha.sh describes the format.
const base83 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~';
const decode83 = (text) => [...text].reduce((value, c) => value * 83 + base83.indexOf(c), 0);
const toLinear = (v) => { const x = v / 255; return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
const toSRGB = (v) => { const x = Math.max(0, Math.min(1, v)); return Math.round((x <= 0.0031308 ? x * 12.92 : 1.055 * x ** (1 / 2.4) - 0.055) * 255); };
export function blurhashPixels(hash, width, height) {
  if (hash.length < 6 || [...hash].some((c) => !base83.includes(c))) return null;
  const size = decode83(hash[0]);
  const nx = (size % 9) + 1;
  const ny = Math.floor(size / 9) + 1;
  if (hash.length !== 4 + 2 * nx * ny) return null;
  const maxAC = (decode83(hash[1]) + 1) / 166;
  const colors = [];
  const dc = decode83(hash.slice(2, 6));
  colors.push([toLinear(dc >> 16), toLinear((dc >> 8) & 255), toLinear(dc & 255)]);
  const signed = (q) => { const v = (q - 9) / 9; return Math.sign(v) * v * v * maxAC; };
  for (let i = 1; i < nx * ny; i++) {
    const v = decode83(hash.slice(4 + i * 2, 6 + i * 2));
    colors.push([signed(Math.floor(v / 361)), signed(Math.floor(v / 19) % 19), signed(v % 19)]);
  }
  const pixels = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const rgb = [0, 0, 0];
      for (let j = 0; j < ny; j++) {
        for (let i = 0; i < nx; i++) {
          const basis = Math.cos((Math.PI * x * i) / width) * Math.cos((Math.PI * y * j) / height);
          const c = colors[i + j * nx];
          rgb[0] += c[0] * basis; rgb[1] += c[1] * basis; rgb[2] += c[2] * basis;
        }
      }
      pixels.set([toSRGB(rgb[0]), toSRGB(rgb[1]), toSRGB(rgb[2]), 255], 4 * (x + y * width));
    }
  }
  return pixels;
}
function paintBlurhash(element) {
  if (element.dataset.painted || (element.complete && element.naturalWidth > 0)) return;
  element.dataset.painted = 'true';
  const pixels = blurhashPixels(element.dataset.blurhash, 32, 32);
  if (!pixels) return;
  const canvas = document.createElement('canvas');
  canvas.width = 32;
  canvas.height = 32;
  canvas.getContext('2d').putImageData(new ImageData(pixels, 32, 32), 0, 0);
  element.style.backgroundImage = `url(${canvas.toDataURL()})`;
  element.style.backgroundSize = '100% 100%';
  // Transparent pictures would show it through: it goes once the picture is there.
  element.addEventListener('load', () => { element.style.backgroundImage = ''; }, { once: true });
}

// A video of mine still processing: its progress, then the card again once it plays.
const followed = new Set();
async function followProcessing(box) {
  const id = box.dataset.processing;
  if (followed.has(id)) return;
  followed.add(id);
  const bar = box.querySelector('progress');
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    let media;
    try { media = await api('GET', `/api/v1/me/media/${id}`); } catch { continue; }
    if (media.state === 'processing') { bar.value = media.progress ?? 0; continue; }
    followed.delete(id);
    const article = box.closest('article[data-post]');
    const fresh = article && await card(article.dataset.post);
    if (fresh) { article.replaceWith(fresh); enhance(fresh); } else location.reload();
    return;
  }
}

// Infinite scroll: the "Older posts" link fetches the next page's cards and replaces itself,
// when scrolled near, or when followed. Someone moving by Tab is not sent into an endless feed:
// the link waits to be followed, so what comes after the feed (the side column) stays in reach,
// and once followed the focus moves on to the first of the new cards.
let tabbing = false;
document.addEventListener('keydown', (event) => { tabbing = event.key === 'Tab' || (tabbing && event.key === 'Shift'); });
// Scrolling again: the links that waited are looked at afresh (observing again reports them).
for (const type of ['pointerdown', 'wheel', 'touchmove']) {
  document.addEventListener(type, () => {
    if (!tabbing) return;
    tabbing = false;
    document.querySelectorAll('a[data-more]:not([data-loading])').forEach((link) => { moreObserver.unobserve(link); moreObserver.observe(link); });
  }, { passive: true });
}
async function loadMore(link) {
  if (link.dataset.loading) return;
  link.dataset.loading = 'true';
  link.setAttribute('aria-busy', 'true');
  link.textContent = t('Loading…');
  try {
    const url = new URL(link.href);
    url.searchParams.set('fragment', '1');
    const response = await fetch(url, { credentials: 'same-origin' });
    if (!response.ok || !response.headers.get('X-Plaza-Fragment')) throw new Error();
    const holder = document.createElement('div');
    holder.innerHTML = await response.text();
    const parent = link.parentElement;
    const nodes = [...holder.children].filter((n) => !(n.id && document.getElementById(n.id)));
    const focused = document.activeElement === link;
    link.replaceWith(...nodes);
    enhance(parent);
    const reachable = 'a[href]:not([tabindex="-1"]), button';
    if (focused) nodes.map((n) => (n.matches?.(reachable) ? n : n.querySelector?.(reachable))).find(Boolean)?.focus();
  } catch {
    delete link.dataset.loading;
    link.removeAttribute('aria-busy');
    link.textContent = t('Could not load more. Try again');
  }
}
const moreObserver = new IntersectionObserver((entries) => {
  entries.forEach((entry) => {
    if (!entry.isIntersecting || tabbing) return;
    moreObserver.unobserve(entry.target);
    loadMore(entry.target);
  });
}, { rootMargin: '600px' });
document.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-more]');
  if (link) { event.preventDefault(); loadMore(link); }
});

/** Fetches one post's card as the server renders it for me; the post page's own card (with the
 * page's menu and save sheet) from the page itself. */
export async function card(postId) {
  const own = Boolean(document.querySelector(`[data-post-page="${postId}"]`));
  const response = await fetch(own ? `/p/${postId}` : `/fragments/post/${postId}`, { credentials: 'same-origin' });
  if (!response.ok || response.redirected || (!own && !response.headers.get('X-Plaza-Fragment'))) return null;
  const page = new DOMParser().parseFromString(await response.text(), 'text/html');
  return page.getElementById(`post-${postId}`);
}

// Realtime: one stream per tab, resumed by the browser with Last-Event-ID.
function live() {
  if (!document.body.dataset.signedIn || !('EventSource' in window)) return;
  const stream = new EventSource('/api/v1/stream');
  const badge = document.getElementById('unread');
  const feed = document.querySelector('[data-live]');
  const on = (type, handler) => stream.addEventListener(type, (e) => { try { handler(JSON.parse(e.data)); } catch { /* ignore a bad frame */ } });
  // A notification may be a group that gained a person, so the count is read, not added up.
  on('notification', async () => {
    if (!badge) return;
    try { setBadge((await api('GET', '/api/v1/me')).unreadNotifications); } catch { /* keep the old count */ }
  });
  on('post.created', async (post) => {
    if (!feed || document.getElementById(`post-${post.id}`)) return;
    const scope = feed.dataset.live;
    if (scope.startsWith('space:') && !post.spaces.some((s) => `space:${s.slug}` === scope)) return;
    const article = await card(post.id);
    if (!article || document.getElementById(article.id)) return;
    article.classList.add('fresh');
    feed.prepend(article);
    feed.querySelector('.empty')?.remove();
    enhance(article);
  });
  on('post.deleted', (event) => document.getElementById(`post-${event.id ?? event.postId}`)?.remove());
  on('like.changed', (event) => setLikes(event.postId, event.likes));
  on('comment.created', (comment) => {
    addComment(comment.postId);
    document.dispatchEvent(new CustomEvent('plaza:remote-comment', { detail: comment }));
  });
  on('post.updated', async (post) => {
    const old = document.getElementById(`post-${post.id}`);
    const fresh = old && await card(post.id);
    if (fresh) { old.replaceWith(fresh); enhance(fresh); }
  });
  on('reset', () => { if (feed) location.reload(); });
  window.addEventListener('pagehide', () => stream.close(), { once: true });
}

function setBadge(count) {
  const badge = document.getElementById('unread');
  if (!badge) return;
  badge.dataset.count = count;
  badge.textContent = count > 0 ? count : '';
  badge.setAttribute('aria-label', plural(count, '{count} unread', '{count} unread'));
}

// A page restored from the back/forward cache had its stream closed: open a new one.
window.addEventListener('pageshow', (event) => { if (event.persisted) live(); });

// The notifications page marks everything read once it has been shown.
if (location.pathname === '/notifications' && document.querySelector('.notification.unread')) {
  api('POST', '/api/v1/me/notifications/read').then(() => setBadge(0)).catch(() => {});
}

// The search form sends only the filters in use: an empty `near` or "Any" kind is no filter
// (and the search answers 422 to `near=` or `kind=` with nothing after it).
document.querySelector('form[data-search]')?.addEventListener('formdata', (event) => {
  for (const name of ['near', 'kind']) if (!String(event.formData.get(name) ?? '').trim()) event.formData.delete(name);
});

// A post's place (compose and edit, `[data-place]`): "Use my location" asks the browser, with the
// person's consent, and fills the hidden latitude and longitude; "Remove" clears them. A place
// name needs a location: the form says so rather than drop the name.
document.addEventListener('click', (event) => {
  const place = event.target.closest('[data-place]');
  const button = event.target.closest('[data-locate], [data-unlocate]');
  if (!place || !button) return;
  const status = place.querySelector('[data-location-status]');
  const latitude = place.querySelector('[data-latitude]');
  const longitude = place.querySelector('[data-longitude]');
  if ('unlocate' in button.dataset) {
    latitude.value = ''; longitude.value = '';
    place.querySelectorAll('input[name$="name" i], input[name=placeName]').forEach((f) => { f.value = ''; });
    status.textContent = t('No location.');
    return;
  }
  if (!navigator.geolocation) { status.textContent = t('This browser cannot share its location.'); return; }
  status.textContent = t('Finding you…');
  navigator.geolocation.getCurrentPosition((position) => {
    latitude.value = position.coords.latitude.toFixed(6);
    longitude.value = position.coords.longitude.toFixed(6);
    status.textContent = t('Location added ({latitude}, {longitude}).', { latitude: latitude.value, longitude: longitude.value });
  }, () => { status.textContent = t('Your location is not available.'); }, { timeout: 10000 });
});
document.addEventListener('submit', (event) => {
  const place = event.target.querySelector('[data-place]');
  const name = place?.querySelector('input[name$="name" i], input[name=placeName]');
  if (!name?.value.trim() || place.querySelector('[data-latitude]').value) return;
  event.preventDefault();
  event.stopPropagation();
  showError(event.target, { message: t('Add the location with “Use my location”, or leave the place empty.'), field: name.name });
}, true);

// Maps (`map.mustache`): the tiles around the centre from the tile server (none when tiles are
// off), and each marker pinned at its place (Web Mercator, 256-pixel tiles); drawn again when
// the map's size changes. When a tile cannot be had (the tile server is unreachable), the map
// goes back to its list of places for good: a place card, never broken images.
function mercator(latitude, longitude, zoom) {
  const size = 256 * 2 ** zoom;
  const sin = Math.min(Math.max(Math.sin(latitude * Math.PI / 180), -0.9999), 0.9999);
  return [(longitude + 180) / 360 * size, (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * size];
}
function showPlacesOnly(map) {
  map.dataset.offline = '';
  map.classList.remove('drawn');
  map.querySelectorAll('.map-tile').forEach((tile) => tile.remove());
  for (const marker of map.querySelectorAll('.marker')) marker.removeAttribute('style');
}
function drawMap(map) {
  if ('offline' in map.dataset) return;
  map.classList.add('drawn');
  map.querySelectorAll('.map-tile').forEach((tile) => tile.remove());
  const zoom = Number(map.dataset.zoom);
  const [x, y] = mercator(Number(map.dataset.lat), Number(map.dataset.lon), zoom);
  const left = x - map.clientWidth / 2;
  const top = y - map.clientHeight / 2;
  const template = map.dataset.tiles;
  if (template) {
    const count = 2 ** zoom;
    const tiles = [];
    for (let ty = Math.floor(top / 256); ty <= Math.floor((top + map.clientHeight) / 256); ty++) {
      for (let tx = Math.floor(left / 256); ty >= 0 && ty < count && tx <= Math.floor((left + map.clientWidth) / 256); tx++) {
        const tile = document.createElement('img');
        tile.className = 'map-tile';
        tile.alt = '';
        tile.addEventListener('error', () => showPlacesOnly(map), { once: true });
        tile.src = template.replace('{z}', zoom).replace('{x}', ((tx % count) + count) % count).replace('{y}', ty);
        tile.style.left = `${tx * 256 - left}px`;
        tile.style.top = `${ty * 256 - top}px`;
        tiles.push(tile);
      }
    }
    map.prepend(...tiles);
  }
  for (const marker of map.querySelectorAll('.marker')) {
    const [mx, my] = mercator(Number(marker.dataset.lat), Number(marker.dataset.lon), zoom);
    marker.style.left = `${mx - left}px`;
    marker.style.top = `${my - top}px`;
  }
}
document.querySelectorAll('[data-map]').forEach((map) => new ResizeObserver(() => drawMap(map)).observe(map));

// A YouTube or Vimeo link plays in the post page once asked to (the site is not contacted
// before): its player in a sandboxed frame, which the page's policy allows from those sites only.
document.addEventListener('click', (event) => {
  const button = event.target.closest('[data-embed]');
  if (!button) return;
  const frame = document.createElement('iframe');
  const url = new URL(button.dataset.embed);
  url.searchParams.set('autoplay', '1');
  frame.src = url.href;
  frame.title = button.dataset.title;
  frame.className = 'embed-frame';
  frame.allow = 'autoplay; encrypted-media; picture-in-picture; fullscreen';
  frame.allowFullscreen = true;
  frame.referrerPolicy = 'strict-origin-when-cross-origin';
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-presentation allow-popups');
  button.replaceWith(frame);
});

// "Near me" on the search page.
document.querySelector('[data-near-me]')?.addEventListener('click', () => {
  const status = document.querySelector('[data-near-status]');
  if (!navigator.geolocation) { status.textContent = t('This browser cannot share its location.'); return; }
  status.textContent = t('Finding you…');
  navigator.geolocation.getCurrentPosition((position) => {
    document.querySelector('[data-near]').value = `${position.coords.latitude.toFixed(5)},${position.coords.longitude.toFixed(5)}`;
    status.textContent = '';
    document.querySelector('form[data-search]').requestSubmit();
  }, () => { status.textContent = t('Location is not available. Type a place as lat,lon.'); }, { timeout: 10000 });
});

// A post opened from search results or from my history is a click, which ranks it higher in
// Recommended: marked here, sent by the post page after its view (post.js).
document.addEventListener('click', (event) => {
  const link = event.target.closest('[data-record-clicks] article[data-post] a[href^="/p/"]');
  if (link) sessionStorage.setItem(`plaza-click:${link.closest('article[data-post]').dataset.post}`, '1');
});

// Saving a post or a link into a collection, or into a new one made in the same step.
document.addEventListener('change', (event) => {
  const select = event.target.closest('[data-save-collection]');
  if (select) select.form.querySelector('[data-new-collection]').hidden = select.value !== '';
});
document.addEventListener('submit', async (event) => {
  const form = event.target.closest('form[data-save]');
  if (!form) return;
  event.preventDefault();
  const f = form.elements;
  form.querySelector('.error').hidden = true;
  await busy(form, async () => {
    try {
      let id = f.collection.value;
      let name = f.collection.selectedOptions[0]?.textContent;
      if (!id) {
        name = f.newName.value.trim();
        if (!name) throw Object.assign(new Error(t('Name the new collection.')), { field: 'newName' });
        id = (await api('POST', '/api/v1/collections', { name })).id;
        f.collection.add(new Option(name, id, true, true), 0);
        form.querySelector('[data-new-collection]').hidden = true;
        f.newName.value = '';
      }
      const item = f.postId ? { postId: f.postId.value } : { url: f.url.value.trim() };
      await api('POST', `/api/v1/collections/${id}/items`, item);
      if (f.url) f.url.value = '';
      form.closest('dialog[open]')?.close();
      toast(t('Saved to {name}', { name }));
    } catch (err) { showError(form, err); }
  });
});

// Menus (`<details data-menu>`, the navigation's More): one open at a time, closed by a click
// elsewhere, by Escape (focus back on its button) and by choosing an entry.
const menus = () => document.querySelectorAll('details[data-menu][open]');
document.addEventListener('click', (event) => {
  for (const menu of menus()) {
    const entry = event.target.closest('.menu a, .menu .menu-item');
    if (!menu.contains(event.target) || (entry && menu.contains(entry))) menu.open = false;
  }
});
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape') return;
  for (const menu of menus()) {
    menu.open = false;
    if (menu.contains(document.activeElement)) menu.querySelector('summary').focus();
  }
});

// Sheets: `data-dialog="id"` opens that `<dialog>`, `data-close` or a click on its backdrop
// closes it; a form in it that succeeds closes it too (`after`, or `plaza:saved`).
document.addEventListener('click', (event) => {
  const opener = event.target.closest('[data-dialog]');
  const dialog = opener && document.getElementById(opener.dataset.dialog);
  if (dialog) {
    // Closed, it gives the focus back to what opened it, or to its menu's button (the menu closed).
    const back = opener.closest('details[data-menu]')?.querySelector('summary') ?? opener;
    dialog.addEventListener('close', () => back.focus(), { once: true });
    // One sheet for many things (each comment's report): the opener names its own.
    if (opener.dataset.targetId) dialog.querySelector('[name=targetId]').value = opener.dataset.targetId;
    dialog.showModal();
    return;
  }
  const open = event.target.closest('dialog[open]');
  if (!open) return;
  // The backdrop is the dialog element itself, outside its box (its padding is inside).
  const box = open.getBoundingClientRect();
  const outside = event.target === open && event.detail > 0 && (event.clientX < box.left || event.clientX > box.right
    || event.clientY < box.top || event.clientY > box.bottom);
  if (outside || event.target.closest('[data-close]')) open.close();
});

// Sharing a post: the system's share sheet where there is one, else its link copied.
document.addEventListener('click', async (event) => {
  const button = event.target.closest('[data-share]');
  if (!button) return;
  const url = new URL(button.dataset.share, location.origin).href;
  if (navigator.share) {
    try { await navigator.share({ url }); } catch { /* closed without sharing */ }
    return;
  }
  try {
    await navigator.clipboard.writeText(url);
    toast(t('Link copied'));
  } catch { prompt(t('Copy this link'), url); }
});

// Several photos in a card: swiped or scrolled (the strip snaps), or stepped with its arrows
// and the arrow keys; its count says which one is showing.
function carousel(root) {
  if (root.dataset.ready) return;
  root.dataset.ready = 'true';
  const strip = root.querySelector('.slides');
  const count = root.querySelector('[data-slide-count]');
  const [previous, next] = root.querySelectorAll('[data-slide]');
  const total = strip.children.length;
  const index = () => Math.round(Math.abs(strip.scrollLeft) / strip.clientWidth);
  const show = () => {
    const at = index();
    count.textContent = `${numbers.format(at + 1)} / ${numbers.format(total)}`;
    const focused = document.activeElement;
    previous.hidden = at === 0;
    next.hidden = at >= total - 1;
    // An arrow that goes away at the end hands the focus to the other one.
    if (focused === next && next.hidden) previous.focus();
    if (focused === previous && previous.hidden) next.focus();
  };
  root.addEventListener('click', (event) => {
    const button = event.target.closest('[data-slide]');
    if (!button) return;
    const sign = getComputedStyle(strip).direction === 'rtl' ? -1 : 1;
    strip.scrollBy({ left: sign * Number(button.dataset.slide) * strip.clientWidth, behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  });
  strip.addEventListener('scroll', show, { passive: true });
  show();
}

// Range inputs show their value.
document.addEventListener('input', (event) => {
  const range = event.target.closest('input[type=range]');
  const output = range?.parentElement.querySelector('[data-progress-out]');
  if (output) output.textContent = `${range.value}%`;
});

enhance();
live();
// Page modules get these helpers passed in rather than importing this file again.
const helpers = { api, upload, toast, busy, showError, enhance, t, plural };
const version = new URL(import.meta.url).search;
for (const [selector, module] of [['[data-post-page]', 'post'], ['[data-compose]', 'compose'], ['[data-avatar]', 'settings']]) {
  if (document.querySelector(selector)) import(`./${module}.js${version}`).then((m) => m.default(helpers));
}

// The installable app: the service worker keeps the shell and the pages read last for offline
// reading, and shows pushes. Signing out drops the page copies (they hold what this person saw).
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register(`/sw.js${version}`, { scope: '/' }).catch(() => { /* no offline copy then */ });
}
document.querySelector('form.logout')?.addEventListener('submit', () => {
  if ('caches' in window) caches.delete('plaza-pages');
});
// A browser subscribed to pushes tells Plaza again after signing in anew (devices go with the
// session that registered them), once per tab and subscription.
const signedIn = document.body.dataset.signedIn;
if (signedIn && 'serviceWorker' in navigator && 'PushManager' in window && window.Notification?.permission === 'granted') {
  navigator.serviceWorker.ready.then(async (registration) => {
    const subscription = await registration.pushManager.getSubscription();
    if (!subscription) return;
    const { endpoint, keys } = subscription.toJSON();
    const key = `plaza-push:${csrf}:${endpoint}`;
    if (sessionStorage.getItem(key)) return;
    await api('POST', '/api/v1/me/push-devices', { platform: 'webpush', endpoint, keys });
    sessionStorage.setItem(key, '1');
  }).catch(() => { /* tried again on the next page */ });
}
// Sign-up: the browser's time zone, so that times show in it from the first page.
const signupTimeZone = document.querySelector('input[name=timeZone]');
if (signupTimeZone && !signupTimeZone.value) signupTimeZone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || '';
