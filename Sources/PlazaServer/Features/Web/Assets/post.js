// The post page: records the view (history), shows comments as they are written, opens the
// save sheet when a card's Save led here (`#save`), and has a text size control (in the post's
// menu) remembered on this device. Browser zoom (ctrl+wheel, pinch) is left alone
// and works too: every size is in rem.
export default function ({ api, enhance }) {
  const page = document.querySelector('[data-post-page]');
  const postId = page.dataset.postPage;
  const list = page.querySelector('[data-comments]');
  let after = page.dataset.after;
  let loading = null;
  // A post opened from search results or history (app.js marks it) is a click too, counted
  // once the view is (a click ranks a post in my history).
  if (document.body.dataset.signedIn) {
    const clicked = sessionStorage.getItem(`plaza-click:${postId}`);
    sessionStorage.removeItem(`plaza-click:${postId}`);
    api('POST', `/api/v1/posts/${postId}/view`)
      .then(() => (clicked ? api('POST', `/api/v1/me/history/${postId}/click`) : null))
      .catch(() => {});
  }

  async function refresh() {
    if (loading) return loading;
    loading = (async () => {
      const url = new URL(`/p/${postId}/comments`, location.origin);
      if (after) url.searchParams.set('cursor', after);
      url.searchParams.set('limit', '100');
      const response = await fetch(url, { credentials: 'same-origin' });
      if (!response.ok || !response.headers.get('X-Plaza-Fragment')) return;
      after = response.headers.get('X-Next-After') || after;
      const holder = document.createElement('ol');
      holder.innerHTML = await response.text();
      for (const item of [...holder.children]) {
        if (document.getElementById(item.id)) continue;
        list.append(item);
        enhance(item);
      }
      if (list.children.length) page.querySelector('[data-no-comments]')?.remove();
    })().finally(() => { loading = null; });
    return loading;
  }

  document.addEventListener('plaza:comments', refresh);
  document.addEventListener('plaza:remote-comment', (e) => { if (e.detail.postId === postId) refresh(); });
  // The stream tells a post's author about its comments; everyone else checks while the page is in view.
  const mine = page.querySelector('.post')?.dataset.author === document.body.dataset.signedIn;
  if (!mine) setInterval(() => { if (document.visibilityState === 'visible') refresh(); }, 4000);

  if (location.hash === '#save') document.getElementById('save-sheet')?.showModal();

  const key = 'plaza.textScale';
  let scale = Number(localStorage.getItem(key)) || 1;
  const apply = (value) => {
    scale = Math.min(2, Math.max(0.8, Math.round(value * 20) / 20));
    page.style.setProperty('--text-scale', scale);
    localStorage.setItem(key, String(scale));
  };
  apply(scale);
  page.addEventListener('click', (event) => {
    const button = event.target.closest('[data-text-size]');
    if (!button) return;
    const step = Number(button.dataset.textSize);
    apply(step === 0 ? 1 : scale + step * 0.1);
  });
}
