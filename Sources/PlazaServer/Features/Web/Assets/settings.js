// Settings: a new profile photo is uploaded (with progress), then set as the avatar.
export default function ({ api, upload, busy, showError }) {
  const form = document.querySelector('[data-avatar]');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const file = form.elements.file.files[0];
    if (!file) return;
    await busy(form, async () => {
      try {
        const media = await upload(file, form.querySelector('[data-upload-progress]'));
        await api('PUT', '/api/v1/me/avatar', { mediaId: media.id });
        location.reload();
      } catch (error) { showError(form, error); }
    });
  });
}
