// Compose: one form for every kind of post. A photo is uploaded first (with a preview and
// progress), then the post is created with its media id.
export default function ({ api, upload, busy, showError }) {
  const form = document.querySelector('[data-compose]');
  const preview = form.querySelector('[data-preview]');
  const bodyLabel = form.querySelector('[data-body-label]');
  const kind = () => form.elements.kind.value;

  function show() {
    form.querySelectorAll('[data-for]').forEach((section) => { section.hidden = section.dataset.for !== kind(); });
    bodyLabel.textContent = kind() === 'photo' ? 'Caption' : kind() === 'link' ? 'Why share it?' : 'Text';
  }
  form.addEventListener('change', (event) => { if (event.target.name === 'kind') show(); });
  show();

  const preselect = document.querySelector('template[data-preselect]')?.content.textContent.trim();
  if (preselect) form.querySelectorAll('input[name=spaces]').forEach((box) => { box.checked = box.value === preselect; });

  form.elements.photo.addEventListener('change', () => {
    const file = form.elements.photo.files[0];
    if (preview.src) URL.revokeObjectURL(preview.src);
    preview.hidden = !file;
    if (file) preview.src = URL.createObjectURL(file);
  });

  const status = form.querySelector('[data-location-status]');
  form.querySelector('[data-locate]').addEventListener('click', () => {
    if (!navigator.geolocation) { status.textContent = 'This browser cannot share its location.'; return; }
    status.textContent = 'Finding you…';
    navigator.geolocation.getCurrentPosition((position) => {
      form.elements.latitude.value = position.coords.latitude.toFixed(6);
      form.elements.longitude.value = position.coords.longitude.toFixed(6);
      status.textContent = `Location added (${form.elements.latitude.value}, ${form.elements.longitude.value}).`;
    }, () => { status.textContent = 'Your location is not available.'; }, { timeout: 10000 });
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const f = form.elements;
    const text = (name) => f[name].value.trim() || undefined;
    const post = { kind: kind(), title: text('title'), body: text('body'), price: text('price') };
    post.spaces = [...form.querySelectorAll('input[name=spaces]:checked')].map((box) => box.value);
    if (f.latitude.value && f.longitude.value) {
      post.location = { latitude: Number(f.latitude.value), longitude: Number(f.longitude.value), name: text('placeName') };
    }
    if (post.kind === 'link') post.link = { url: f.url.value.trim() };
    if (post.kind === 'activity') {
      post.activity = { type: f.activityType.value.trim(), emoji: text('emoji'), color: f.color.value, progress: Number(f.progress.value) };
    }
    const error = form.querySelector('.error');
    error.hidden = true;
    await busy(form, async () => {
      try {
        if (post.kind === 'photo') {
          const file = f.photo.files[0];
          if (!file) throw Object.assign(new Error('Choose a photo to post.'), { field: 'photo' });
          const media = await upload(file, form.querySelector('[data-upload-progress]'));
          post.mediaIds = [media.id];
        }
        const created = await api('POST', '/api/v1/posts', post);
        location.assign(`/p/${created.id}`);
      } catch (err) { showError(form, err); }
    });
  });
}
