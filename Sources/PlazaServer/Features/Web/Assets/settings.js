// Settings: a new profile photo is uploaded (with progress), then set as the avatar.
export default function ({ api, upload, busy, showError, t }) {
  // Two-factor sign-in: the new key to add to an app, then the recovery codes, shown once.
  const twoFactor = document.querySelector('[data-two-factor]');
  twoFactor.addEventListener('plaza:two-factor-setup', (event) => {
    const confirm = twoFactor.querySelector('[data-two-factor-confirm]');
    confirm.querySelector('[data-two-factor-secret]').textContent = event.detail.secret.replace(/(.{4})/g, '$1 ').trim();
    confirm.querySelector('[data-otpauth]').href = event.detail.otpauthURL;
    confirm.querySelector('[data-two-factor-qr]').src = `data:image/svg+xml,${encodeURIComponent(event.detail.qrCode)}`;
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

  pushSettings({ api, showError, t });

  // Language and time: with no time zone chosen yet, the menu offers the browser's (saving
  // the form keeps it).
  const zone = document.querySelector('select[data-browser-time-zone]');
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone && [...zone.options].some((option) => option.value === browserZone)) zone.value = browserZone;

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

// Push: this browser's subscription (the server's VAPID key, then POST /me/push-devices), and
// which kinds of notification are pushed (PATCH /me/preferences {push: {kind: on}}).
function pushSettings({ api, showError, t }) {
  const card = document.querySelector('[data-push]');
  if (!card) return;
  const state = card.querySelector('[data-push-state]');
  const enable = card.querySelector('[data-push-enable]');
  const disable = card.querySelector('[data-push-disable]');
  card.querySelectorAll('[data-push-kind]').forEach((box) => {
    box.addEventListener('change', async () => {
      try {
        await api('PATCH', '/api/v1/me/preferences', { push: { [box.dataset.pushKind]: box.checked } });
      } catch (error) { box.checked = !box.checked; showError(card, error); }
    });
  });
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) return;
  const key = (text) => {
    const bytes = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4));
    return Uint8Array.from(bytes, (c) => c.charCodeAt(0));
  };
  const show = async () => {
    const registration = await navigator.serviceWorker.ready;
    const subscription = await registration.pushManager.getSubscription();
    const denied = Notification.permission === 'denied';
    state.textContent = denied ? t('This browser blocks notifications from this site; allow them in its settings.')
      : subscription ? t('This browser gets push notifications.') : t('This browser does not get push notifications.');
    enable.hidden = denied || Boolean(subscription);
    disable.hidden = !subscription;
  };
  enable.addEventListener('click', async () => {
    try {
      if (await Notification.requestPermission() !== 'granted') { await show(); return; }
      const { publicKey } = await api('GET', '/api/v1/push/web-push-key');
      const registration = await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key(publicKey) });
      const { endpoint, keys } = subscription.toJSON();
      await api('POST', '/api/v1/me/push-devices', { platform: 'webpush', endpoint, keys });
      location.reload();
    } catch (error) { showError(card, error); }
  });
  disable.addEventListener('click', async () => {
    try {
      const registration = await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.getSubscription();
      if (subscription) await subscription.unsubscribe();
      // This session's browser subscription is this browser's.
      const { items } = await api('GET', '/api/v1/me/push-devices');
      for (const device of items.filter((d) => d.thisSession && d.platform === 'webpush')) {
        await api('DELETE', `/api/v1/me/push-devices/${device.id}`);
      }
      location.reload();
    } catch (error) { showError(card, error); }
  });
  show().catch(() => {});
}
