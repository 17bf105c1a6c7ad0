// Cropping a photo before it is uploaded, in the browser: a dialog shows the picture with a
// frame that the pointer drags (inside: move; near a corner: resize; outside: draw anew) and
// the keyboard moves (arrows) or resizes (Shift + arrows), square or free. "Crop" draws the
// framed part at the picture's own resolution into a new file of the same type (JPEG for
// anything but PNG and WebP). The server strips what metadata is left, as for any upload.

const HANDLE = 14;

/** Opens the crop dialog for `file` (an image); resolves to the cropped File, or null if cancelled.
 *  `t` is app.js's, for the dialog's texts in the page's language. */
export function cropImage(file, t) {
  return new Promise((resolve) => {
    const dialog = document.createElement('dialog');
    dialog.className = 'crop-dialog';
    dialog.setAttribute('aria-label', t('Crop {name}', { name: file.name }));
    dialog.innerHTML = `
      <form method="dialog" class="stack">
        <canvas class="crop-canvas" tabindex="0"></canvas>
        <fieldset class="row"><legend></legend>
          <label class="check"><input type="radio" name="shape" value="square" checked> <span></span></label>
          <label class="check"><input type="radio" name="shape" value="free"> <span></span></label>
        </fieldset>
        <p class="muted" data-crop-size aria-live="polite"></p>
        <div class="row"><button type="submit" value="crop" class="primary" data-crop-apply></button>
          <button type="submit" value="cancel"></button></div>
      </form>`;
    // The texts go in as text, not markup.
    dialog.querySelector('canvas').setAttribute('aria-label', t('Crop frame: arrows move it, Shift and arrows resize it'));
    dialog.querySelector('legend').textContent = t('Shape');
    const [squareLabel, freeLabel] = dialog.querySelectorAll('label.check span');
    squareLabel.textContent = t('Square');
    freeLabel.textContent = t('Free');
    dialog.querySelector('[data-crop-apply]').textContent = t('Crop');
    dialog.querySelector('button[value=cancel]').textContent = t('Cancel');
    document.body.append(dialog);
    const canvas = dialog.querySelector('canvas');
    const size = dialog.querySelector('[data-crop-size]');
    const image = new Image();
    const source = URL.createObjectURL(file);
    let scale = 1;
    let frame = null; // in the picture's own pixels: {x, y, w, h}
    let drag = null;

    const square = () => dialog.querySelector('input[name=shape]:checked').value === 'square';
    const clamp = (value, low, high) => Math.min(Math.max(value, low), high);

    function fit(next) {
      const W = image.naturalWidth, H = image.naturalHeight;
      let { x, y, w, h } = next;
      w = clamp(w, 8, W); h = clamp(h, 8, H);
      if (square()) { w = h = Math.min(w, h, W, H); }
      frame = { x: clamp(x, 0, W - w), y: clamp(y, 0, H - h), w, h };
    }

    function draw() {
      const g = canvas.getContext('2d');
      g.clearRect(0, 0, canvas.width, canvas.height);
      g.drawImage(image, 0, 0, canvas.width, canvas.height);
      const [x, y, w, h] = [frame.x * scale, frame.y * scale, frame.w * scale, frame.h * scale];
      g.fillStyle = 'rgb(0 0 0 / 0.55)';
      g.fillRect(0, 0, canvas.width, y);
      g.fillRect(0, y + h, canvas.width, canvas.height - y - h);
      g.fillRect(0, y, x, h);
      g.fillRect(x + w, y, canvas.width - x - w, h);
      g.strokeStyle = '#fff';
      g.lineWidth = 2;
      g.strokeRect(x + 1, y + 1, w - 2, h - 2);
      g.fillStyle = '#fff';
      for (const [cx, cy] of [[x, y], [x + w, y], [x, y + h], [x + w, y + h]]) g.fillRect(cx - 5, cy - 5, 10, 10);
      size.textContent = t('{width} × {height} pixels', { width: Math.round(frame.w), height: Math.round(frame.h) });
    }

    function reset() {
      const W = image.naturalWidth, H = image.naturalHeight;
      const side = Math.min(W, H);
      fit(square() ? { x: (W - side) / 2, y: (H - side) / 2, w: side, h: side } : { x: 0, y: 0, w: W, h: H });
      draw();
    }

    const point = (event) => {
      const box = canvas.getBoundingClientRect();
      return [(event.clientX - box.left) / scale * (canvas.width / box.width), (event.clientY - box.top) / scale * (canvas.height / box.height)];
    };

    canvas.addEventListener('pointerdown', (event) => {
      const [px, py] = point(event);
      const near = HANDLE / scale;
      const corner = [[0, 0], [1, 0], [0, 1], [1, 1]].find(([cx, cy]) =>
        Math.abs(px - (frame.x + cx * frame.w)) < near && Math.abs(py - (frame.y + cy * frame.h)) < near);
      const inside = px > frame.x && px < frame.x + frame.w && py > frame.y && py < frame.y + frame.h;
      // Resizing keeps the opposite corner where it is; drawing anew starts at the pointer.
      if (corner) drag = { kind: 'resize', anchor: [frame.x + (1 - corner[0]) * frame.w, frame.y + (1 - corner[1]) * frame.h] };
      else if (inside) drag = { kind: 'move', offset: [px - frame.x, py - frame.y] };
      else drag = { kind: 'resize', anchor: [px, py] };
      canvas.setPointerCapture(event.pointerId);
    });
    canvas.addEventListener('pointermove', (event) => {
      if (!drag) return;
      const [px, py] = point(event);
      if (drag.kind === 'move') fit({ ...frame, x: px - drag.offset[0], y: py - drag.offset[1] });
      else {
        const [ax, ay] = drag.anchor;
        let w = Math.abs(px - ax), h = Math.abs(py - ay);
        if (square()) w = h = Math.max(w, h);
        fit({ x: px < ax ? ax - w : ax, y: py < ay ? ay - h : ay, w, h });
      }
      draw();
    });
    canvas.addEventListener('pointerup', () => { drag = null; });
    canvas.addEventListener('keydown', (event) => {
      const step = Math.max(1, Math.round(Math.min(image.naturalWidth, image.naturalHeight) / 50));
      const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
      const move = moves[event.key];
      if (!move) return;
      event.preventDefault();
      if (event.shiftKey) fit({ ...frame, w: frame.w + move[0] + (square() ? move[1] : 0), h: frame.h + move[1] + (square() ? move[0] : 0) });
      else fit({ ...frame, x: frame.x + move[0], y: frame.y + move[1] });
      draw();
    });
    dialog.addEventListener('change', (event) => { if (event.target.name === 'shape') reset(); });

    image.addEventListener('load', () => {
      const room = Math.min(window.innerWidth * 0.85, 720);
      scale = Math.min(4, room / image.naturalWidth, (window.innerHeight * 0.55) / image.naturalHeight);
      canvas.width = Math.round(image.naturalWidth * scale);
      canvas.height = Math.round(image.naturalHeight * scale);
      reset();
      dialog.showModal();
      canvas.focus();
    });
    image.addEventListener('error', () => { finish(null); });
    image.src = source;

    function finish(result) {
      URL.revokeObjectURL(source);
      dialog.remove();
      resolve(result);
    }

    dialog.addEventListener('close', () => {
      if (dialog.returnValue !== 'crop') { finish(null); return; }
      const out = document.createElement('canvas');
      out.width = Math.round(frame.w);
      out.height = Math.round(frame.h);
      out.getContext('2d').drawImage(image, frame.x, frame.y, frame.w, frame.h, 0, 0, out.width, out.height);
      const type = file.type === 'image/png' || file.type === 'image/webp' ? file.type : 'image/jpeg';
      out.toBlob((blob) => {
        if (!blob) { finish(null); return; }
        // What the browser made, which may not be what was asked (Safari writes PNG for WebP).
        const made = blob.type || 'image/png';
        const extension = { 'image/jpeg': '.jpg', 'image/png': '.png', 'image/webp': '.webp' }[made] ?? '';
        const name = made === file.type ? file.name : file.name.replace(/\.[^.]*$/, '') + extension;
        finish(new File([blob], name, { type: made, lastModified: Date.now() }));
      }, type, 0.92);
    });
  });
}
