// Compose: one form for every kind of post. Photos and videos are uploaded first (previews,
// then one progress bar per file), then the post is created with their media ids, in order.
// A video is processed on the server after its upload; the post shows once it is ready.
export default function ({ api, upload, busy, showError, t }) {
  const form = document.querySelector('[data-compose]');
  const previews = form.querySelector('[data-previews]');
  const bodyLabel = form.querySelector('[data-body-label]');
  const kind = () => form.elements.kind.value;

  function show() {
    form.querySelectorAll('[data-for]').forEach((section) => { section.hidden = !section.dataset.for.split(' ').includes(kind()); });
    bodyLabel.textContent = kind() === 'photo' ? t('Caption') : kind() === 'link' ? t('Why share it?') : t('Text');
  }
  form.addEventListener('change', (event) => { if (event.target.name === 'kind') show(); });
  show();

  const preselect = document.querySelector('template[data-preselect]')?.content.textContent.trim();
  if (preselect) form.querySelectorAll('input[name=spaces]').forEach((box) => { box.checked = box.value === preselect; });

  // The camera (phones open it for `capture`) adds what it took to the chosen files.
  form.elements.camera.addEventListener('change', () => {
    const all = new DataTransfer();
    [...form.elements.photo.files, ...form.elements.camera.files].forEach((file) => all.items.add(file));
    form.elements.photo.files = all.files;
    form.elements.camera.value = '';
    form.elements.photo.dispatchEvent(new Event('change'));
  });

  // Photos the browser can redraw (not GIFs, which would lose their motion) can be cropped first.
  const croppable = ['image/jpeg', 'image/png', 'image/webp'];
  // Each photo or video asks for its alt text (what it shows, for people who cannot see it),
  // kept by position when the files change (a crop).
  const altTexts = () => [...previews.querySelectorAll('textarea[data-alt]')].map((box) => box.value);
  form.elements.photo.addEventListener('change', () => {
    const written = altTexts();
    previews.querySelectorAll('img, video').forEach((item) => URL.revokeObjectURL(item.src));
    previews.replaceChildren(...[...form.elements.photo.files].map((file, i) => {
      const video = file.type.startsWith('video/');
      const box = document.createElement('div');
      box.className = 'preview-item';
      const item = document.createElement(video ? 'video' : 'img');
      item.className = 'preview';
      item.dataset.preview = '';
      if (video) { item.muted = true; item.preload = 'metadata'; item.setAttribute('aria-label', t('Preview of video {number}', { number: i + 1 })); }
      else item.alt = t('Preview of photo {number}', { number: i + 1 });
      item.src = URL.createObjectURL(file);
      const label = document.createElement('label');
      label.textContent = video ? t('Describe video {number} for people who cannot see it', { number: i + 1 })
        : t('Describe photo {number} for people who cannot see it', { number: i + 1 });
      const alt = document.createElement('textarea');
      alt.name = `alt-${i}`;
      alt.dataset.alt = '';
      alt.rows = 2;
      alt.maxLength = Number(previews.dataset.altMaxlength);
      alt.value = written[i] ?? '';
      label.append(alt);
      box.append(item, label);
      if (!croppable.includes(file.type)) return box;
      const crop = document.createElement('button');
      crop.type = 'button';
      crop.className = 'crop';
      crop.dataset.crop = String(i);
      crop.textContent = t('Crop');
      crop.setAttribute('aria-label', t('Crop photo {number}', { number: i + 1 }));
      box.insertBefore(crop, label);
      return box;
    }));
  });
  previews.addEventListener('click', async (event) => {
    const button = event.target.closest('[data-crop]');
    if (!button) return;
    const { cropImage } = await import(`./crop.js${new URL(import.meta.url).search}`);
    const index = Number(button.dataset.crop);
    const files = [...form.elements.photo.files];
    const cropped = await cropImage(files[index], t);
    if (!cropped) return;
    files[index] = cropped;
    const all = new DataTransfer();
    files.forEach((file) => all.items.add(file));
    form.elements.photo.files = all.files;
    form.elements.photo.dispatchEvent(new Event('change'));
    previews.querySelector(`[data-crop="${index}"]`)?.focus();
  });

  tagSuggestions(form, api);

  // A poll's options: one more field at a time, up to the most a poll has.
  const pollOptions = form.querySelector('[data-poll-options]');
  form.querySelector('[data-add-option]')?.addEventListener('click', (event) => {
    const fields = pollOptions.querySelectorAll('label');
    if (fields.length >= Number(pollOptions.dataset.max)) { event.currentTarget.hidden = true; return; }
    const label = fields[fields.length - 1].cloneNode(true);
    label.firstChild.textContent = `${t('Option {number}', { number: fields.length + 1 })} `;
    label.querySelector('input').value = '';
    pollOptions.append(label);
    label.querySelector('input').focus();
    if (fields.length + 1 >= Number(pollOptions.dataset.max)) event.currentTarget.hidden = true;
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const f = form.elements;
    const text = (name) => f[name].value.trim() || undefined;
    const post = { kind: kind(), title: text('title'), body: text('body'), price: text('price'), contentWarning: text('contentWarning') };
    if (post.kind === 'photo' || post.kind === 'activity') post.sensitive = f.sensitive.checked;
    post.spaces = [...form.querySelectorAll('input[name=spaces]:checked')].map((box) => box.value);
    post.audience = f.audience.value;
    if (f.latitude.value && f.longitude.value) {
      post.location = { latitude: Number(f.latitude.value), longitude: Number(f.longitude.value), name: text('placeName') };
    }
    if (post.kind === 'link') post.link = { url: f.url.value.trim() };
    const options = [...form.querySelectorAll('input[name=pollOption]')].map((field) => field.value.trim()).filter(Boolean);
    if (post.kind !== 'photo' && options.length) {
      post.poll = { options, multiple: f.pollMultiple.checked, expiresInSeconds: Number(f.pollDuration.value) };
    }
    if (post.kind === 'activity') {
      post.activity = { type: f.activityType.value.trim(), emoji: text('emoji'), color: f.color.value, progress: Number(f.progress.value) };
    }
    const error = form.querySelector('.error');
    error.hidden = true;
    await busy(form, async () => {
      try {
        if (post.kind === 'photo' || post.kind === 'activity') {
          const files = [...f.photo.files];
          if (!files.length && post.kind === 'photo') throw Object.assign(new Error(t('Choose a photo or video to post.')), { field: 'photo' });
          if (files.length > 10) throw Object.assign(new Error(t('A post shows at most 10 photos and videos.')), { field: 'photo' });
          post.mediaIds = [];
          const alts = altTexts();
          const progress = form.querySelector('[data-upload-progress]');
          for (const [i, file] of files.entries()) post.mediaIds.push((await upload(file, progress, { description: alts[i]?.trim() })).id);
        }
        const created = await api('POST', '/api/v1/posts', post);
        location.assign(`/p/${created.id}`);
      } catch (err) { showError(form, err); }
    });
  });
}

// Hashtags that start as the word being typed does (`#ram` → #ramen), offered under the text:
// choosing one completes the word.
function tagSuggestions(form, api) {
  const field = form.querySelector('[data-tag-complete]');
  const box = form.querySelector('[data-tag-suggestions]');
  const list = box?.querySelector('[data-tag-list]');
  if (!field || !list) return;
  let asked = '';
  const word = () => {
    const before = field.value.slice(0, field.selectionStart);
    return /(?:^|[^\p{L}\p{N}_/)&])#([\p{L}\p{M}\p{N}_]{1,60})$/u.exec(before)?.[1] ?? '';
  };
  field.addEventListener('input', async () => {
    const prefix = word();
    if (prefix === asked) return;
    asked = prefix;
    if (!prefix) { box.hidden = true; return; }
    try {
      const page = await api('GET', `/api/v1/hashtags?q=${encodeURIComponent(prefix)}&limit=5`);
      if (prefix !== asked) return;
      list.replaceChildren(...page.items.map((tag) => {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'chip';
        button.textContent = `#${tag.name}`;
        button.dataset.tag = tag.name;
        return button;
      }));
      box.hidden = page.items.length === 0;
    } catch { box.hidden = true; }
  });
  list.addEventListener('click', (event) => {
    const button = event.target.closest('[data-tag]');
    if (!button) return;
    const end = field.selectionStart;
    const start = end - word().length;
    field.value = `${field.value.slice(0, start)}${button.dataset.tag} ${field.value.slice(end)}`;
    field.focus();
    field.selectionStart = field.selectionEnd = start + button.dataset.tag.length + 1;
    asked = '';
    box.hidden = true;
  });
}
