// Settings: a new profile photo is uploaded (with progress), then set as the avatar.
export default function ({ api, upload, busy, showError }) {
  // Two-factor sign-in: the new key to add to an app, then the recovery codes, shown once.
  const twoFactor = document.querySelector('[data-two-factor]');
  twoFactor.addEventListener('plaza:two-factor-setup', (event) => {
    const confirm = twoFactor.querySelector('[data-two-factor-confirm]');
    confirm.querySelector('[data-two-factor-secret]').textContent = event.detail.secret.replace(/(.{4})/g, '$1 ').trim();
    confirm.querySelector('[data-otpauth]').href = event.detail.otpauthURL;
    confirm.hidden = false;
    confirm.elements.code.focus();
  });
  twoFactor.addEventListener('plaza:recovery-codes', (event) => {
    const list = twoFactor.querySelector('[data-recovery-list]');
    list.replaceChildren(...event.detail.recoveryCodes.map((code) => {
      const item = document.createElement('li');
      item.textContent = code;
      return item;
    }));
    twoFactor.querySelectorAll('form').forEach((form) => { form.hidden = true; });
    twoFactor.querySelector('[data-recovery-codes]').hidden = false;
  });

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
