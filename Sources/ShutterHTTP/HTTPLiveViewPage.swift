import ShutterService
extension HTTPPages {
    /// The live-view page served at `/`: the camera's preview filling the page, with the phone's
    /// Camera Control look over it (the current control's label, value and sliding scale while the
    /// controls are active, the list of controls while the chooser is open), a white flash and a
    /// strip of thumbnails for each photo, the last gesture and the counters, a shutter button, and
    /// mirror and rule-of-thirds toggles kept per browser.
    ///
    /// Plain HTML, CSS and JavaScript in one string, nothing fetched from elsewhere, so it works on
    /// a rig with no internet. It reads `GET /api/status` once (and again when events were lost),
    /// follows `GET /events`, lists `GET /photos/`, shows `GET /stream` (multipart JPEG) or, where
    /// that fails, is slow to start, on iOS, or with `?view=snapshot`, polls `GET /snapshot`, each
    /// with `?width=` its picture's displayed width in device pixels; it
    /// sends `POST /api/capture`, `/api/set` (a drag on the scale, at most 10 a second and the final
    /// value on release) and `/api/select` (a tap in the chooser). The ids a test looks for:
    /// `#overlay` (`hidden` while the controls are inactive, `data-state` the controls' state, or
    /// `remote` while a tap on `#viewfinder` shows the scale on the page alone),
    /// `#control-label`, `#control-value`, `#scale`, `#chooser`, `#flash` (`flash-on`,
    /// `data-flashes`), `#photos`, `#gesture` (the last gesture, gone 2 s after it ended),
    /// `#counters` (the output folder's photos, presses since the daemon started), `#offline`
    /// (shown while the daemon does not answer), `#shutter`, `#mirror`, `#grid`.
    static let liveView = #"""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
    <meta name="color-scheme" content="dark">
    <link rel="icon" href="/favicon.svg" type="image/svg+xml">
    <title>shutter</title>
    <style>
    :root { --yellow: #ffd60a; --glass: rgba(28, 28, 30, .62); }
    * { box-sizing: border-box; }
    html, body { margin: 0; height: 100%; overflow: hidden; background: #000; color: #fff;
      font: 15px -apple-system, system-ui, "Segoe UI", Roboto, sans-serif;
      -webkit-user-select: none; user-select: none; -webkit-tap-highlight-color: transparent; }
    [hidden] { display: none !important; }
    button { font: inherit; color: inherit; cursor: pointer; }

    /* The viewfinder fills the page; the picture keeps its shape (black bars, never cropped). */
    #viewfinder { position: fixed; inset: 0; }
    #frame { display: block; width: 100%; height: 100%; object-fit: contain; }
    body.mirrored #frame { transform: scaleX(-1); }
    /* Placed over the picture itself (not the bars) by fit() below. */
    #thirds { position: absolute; pointer-events: none; }
    #thirds::before, #thirds::after { content: ""; position: absolute; border: 0 solid rgba(255, 255, 255, .45); }
    #thirds::before { top: 0; bottom: 0; left: 33.333%; right: 33.333%; border-width: 0 1px; }
    #thirds::after { left: 0; right: 0; top: 33.333%; bottom: 33.333%; border-width: 1px 0; }
    #flash { position: fixed; inset: 0; background: #fff; opacity: 0; pointer-events: none; transition: opacity .15s ease-out; }
    #flash.flash-on { opacity: 1; transition: none; }

    #top { position: fixed; top: 0; left: 0; right: 0; display: flex; align-items: center; gap: 8px;
      padding: calc(8px + env(safe-area-inset-top)) 12px 18px; font-size: 13px;
      background: linear-gradient(rgba(0, 0, 0, .65), transparent); transition: opacity .2s; }
    #gesture { flex: 1; min-width: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-variant-numeric: tabular-nums; transition: opacity .4s; }
    #gesture.faded { opacity: 0; }
    #counters { opacity: .75; white-space: nowrap; font-variant-numeric: tabular-nums; }
    .toggle { border: 0; border-radius: 14px; padding: 5px 10px; background: rgba(255, 255, 255, .16); font-size: 13px; }
    .toggle[aria-pressed="true"] { background: var(--yellow); color: #000; }
    #note { position: fixed; top: calc(48px + env(safe-area-inset-top)); left: 50%; transform: translateX(-50%);
      max-width: 92vw; padding: 8px 12px; border-radius: 10px; background: rgba(0, 0, 0, .8); font-size: 14px; text-align: center; }
    #note a { color: var(--yellow); }
    /* The daemon gone: the last picture dimmed, and a word over it until it is back. */
    #offline { position: fixed; inset: 0; margin: 0; display: flex; align-items: center; justify-content: center;
      background: rgba(0, 0, 0, .6); font-size: 17px; font-weight: 600; pointer-events: none; }

    #bottom { position: fixed; left: 0; right: 0; bottom: 0; height: calc(112px + env(safe-area-inset-bottom));
      padding-bottom: env(safe-area-inset-bottom); display: grid; grid-template-columns: 1fr auto 1fr; column-gap: 14px; align-items: center;
      background: linear-gradient(transparent, rgba(0, 0, 0, .7)); transition: opacity .2s; }
    /* Scrolls sideways when full; the fading edge says there is more. */
    #photos { display: flex; gap: 6px; min-width: 0; overflow-x: auto; padding-left: 12px; scrollbar-width: none;
      -webkit-mask-image: linear-gradient(to right, #000 80%, transparent); mask-image: linear-gradient(to right, #000 80%, transparent); }
    #photos img { display: block; width: 48px; height: 48px; object-fit: cover; border-radius: 8px; border: 1px solid rgba(255, 255, 255, .35); }
    #shutter { width: 72px; height: 72px; border-radius: 50%; border: 4px solid #fff; background: #fff; box-shadow: inset 0 0 0 3px #000; }
    #shutter:active { background: #ccc; }
    /* While a swipe adjusts, the page steps back as the phone's camera hides its own controls. */
    body[data-controls="adjusting"] #top, body[data-controls="adjusting"] #bottom { opacity: .25; }

    /* The Camera Control overlay: a glass pill with the label, the value and the sliding scale. */
    #overlay { position: fixed; left: 50%; bottom: 124px; transform: translateX(-50%); width: min(94vw, 520px);
      padding: 8px 0 6px; border-radius: 22px; background: var(--glass); text-align: center;
      -webkit-backdrop-filter: blur(14px); backdrop-filter: blur(14px); }
    #control-label { font-size: 13px; opacity: .8; }
    #control-value { font-size: 22px; font-weight: 600; color: var(--yellow); font-variant-numeric: tabular-nums; min-height: 1.2em; }
    #scale { position: relative; height: 46px; margin-top: 2px; touch-action: none; cursor: ew-resize; }
    #scale canvas { display: block; width: 100%; height: 100%; }
    #scale .mark { position: absolute; left: 50%; top: 0; width: 2px; height: 22px; margin-left: -1px; border-radius: 1px; background: var(--yellow); }
    #overlay[data-state="choosing"] #scale { display: none; }
    #chooser { list-style: none; margin: 6px 0 4px; padding: 0 8px; display: flex; flex-wrap: wrap; justify-content: center; gap: 6px; }
    #chooser li { padding: 5px 12px; border-radius: 14px; background: rgba(255, 255, 255, .14); font-size: 14px; cursor: pointer; }
    #chooser li.highlighted { background: var(--yellow); color: #000; font-weight: 600; }
    </style></head><body data-controls="inactive">
    <div id="viewfinder"><img id="frame" alt="live view"><div id="thirds" hidden></div></div>
    <div id="flash" data-flashes="0"></div>
    <header id="top">
      <span id="gesture"></span><span id="counters"></span>
      <button id="mirror" class="toggle" aria-pressed="false" title="Mirror the picture">Mirror</button>
      <button id="grid" class="toggle" aria-pressed="false" title="Rule-of-thirds grid">Grid</button>
    </header>
    <p id="note" hidden></p>
    <p id="offline" role="status" hidden>shutter stopped; reconnecting</p>
    <section id="overlay" hidden data-state="inactive" aria-live="polite">
      <ul id="chooser" role="listbox" aria-label="Controls" hidden></ul>
      <div id="control-label"></div>
      <div id="control-value"></div>
      <div id="scale" tabindex="0" aria-label="Drag or use the arrow keys to change the value"><canvas></canvas><div class="mark"></div></div>
    </section>
    <footer id="bottom"><nav id="photos" aria-label="Last photos"></nav><button id="shutter" aria-label="Take a photo"></button><span></span></footer>
    <script>
    'use strict';
    const $ = (id) => document.getElementById(id);
    const frame = $('frame'), overlay = $('overlay'), scaleBox = $('scale'), canvas = scaleBox.querySelector('canvas');

    // What the daemon said: the controls by id (in the board's order), the overlay's state, the
    // current and highlighted control. /api/status fills it, events change it, render() shows it.
    const rig = { controls: new Map(), state: 'inactive', current: null, highlighted: null };
    // Until when the page shows its own scale while the rig's controls are inactive (0: it does not).
    let openHereUntil = 0, openHereTimer = 0;

    let noteTimer = 0;
    function note(html, seconds) {
      const box = $('note');
      box.innerHTML = html;
      box.hidden = false;
      clearTimeout(noteTimer);
      if (seconds) noteTimer = setTimeout(() => { box.hidden = true; }, seconds * 1000);
    }
    const escape = (text) => String(text).replace(/[&<>"]/g, (c) => '&#' + c.charCodeAt(0) + ';');

    // Same origin, so the cookie the token link set goes along; a 401 means that cookie is missing.
    async function request(path, body) {
      const init = body === undefined ? { cache: 'no-store' }
        : { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
      const response = await fetch(path, init);
      const reply = await response.json().catch(() => null);
      if (response.status === 401) note('This rig wants its token: open the link <code>shutter run</code> printed, or <a href="/">enter the token</a>.');
      return { status: response.status, reply };
    }

    async function loadStatus() {
      try {
        const { status, reply } = await request('/api/status');
        if (status !== 200 || !reply) return;
        rig.controls = new Map((reply.controls || []).map((control) => [control.id, control]));
        rig.state = reply.controlsState || 'inactive';
        rig.current = reply.currentControl ?? null;
        rig.highlighted = reply.highlightedControl ?? null;
        showCounters(reply.counters);
        render();
      } catch (error) {
        note('shutter does not answer (' + escape(error.message) + ')', 4);
      }
    }

    // The daemon's counters are since it started; the photos count those in the output folder,
    // as the strip of thumbnails beside it shows them (a restart does not make them "0 photos").
    let session = null, photoTotal = null;
    function showCounters(counters) {
      if (counters) session = counters;
      if (!session) return;
      const count = (n, one, many) => n + ' ' + (n === 1 ? one : many);
      const photos = photoTotal ?? session.photos;
      let text = count(photos, 'photo', 'photos') + ' · ' + count(session.presses, 'press', 'presses');
      if (session.failures) text += ' · ' + session.failures + ' failed';
      $('counters').textContent = text;
      $('counters').title = count(photos, 'photo', 'photos') + ' in the output folder; since shutter started: '
        + count(session.photos, 'photo', 'photos') + ', ' + count(session.presses, 'press', 'presses');
    }
    async function loadPhotoTotal() {
      const { reply } = await request('/photos/?limit=1').catch(() => ({}));
      if (reply && typeof reply.total === 'number') { photoTotal = reply.total; showCounters(); }
    }
    // Events carry no counters: ask again shortly after what changes them (one request for a burst).
    let countersTimer = 0;
    function refreshCounters() {
      clearTimeout(countersTimer);
      countersTimer = setTimeout(async () => {
        const { reply } = await request('/api/status').catch(() => ({}));
        if (reply) showCounters(reply.counters);
        loadPhotoTotal();
      }, 150);
    }

    /* ---- Events ---- */

    function control(id, fields) {
      // An event may come before /api/status answered: keep what it says all the same.
      if (!rig.controls.has(id)) rig.controls.set(id, { id, label: id, enabled: true });
      return Object.assign(rig.controls.get(id), fields || {});
    }
    // The last gesture shows while it lasts and 2 s after it ended, then fades: a label left
    // from minutes ago would say the rig is doing what it is not. A gesture whose end was lost
    // (events dropped) goes after 10 s all the same.
    let gestureTimer = 0;
    function gesture(text, lasting) {
      const label = $('gesture');
      label.textContent = text;
      label.classList.remove('faded');
      clearTimeout(gestureTimer);
      gestureTimer = setTimeout(() => {
        label.classList.add('faded');
        gestureTimer = setTimeout(() => { label.textContent = ''; label.classList.remove('faded'); }, 400);
      }, lasting ? 10000 : 2000);
    }
    const handlers = {
      controlsActive(e) { rig.state = 'active'; rig.current = e.control; control(e.control, { label: e.label, text: e.text }); },
      controlsInactive() { rig.state = 'inactive'; rig.highlighted = null; },
      controlsAdjusting(e) { if (rig.state !== 'inactive') rig.state = e.phase === 'began' ? 'adjusting' : 'active'; },
      controlValue(e) {
        const fields = { label: e.label, text: e.text };
        if ('index' in e) fields.index = e.index; else fields.value = e.value;
        control(e.control, fields);
      },
      controlSelected(e) { rig.current = e.control; control(e.control, { label: e.label, text: e.text }); },
      chooser(e) {
        if (e.phase === 'began') { rig.state = 'choosing'; rig.highlighted = rig.current; }
        else if (rig.state === 'choosing') { rig.state = 'active'; rig.highlighted = null; }
      },
      controlHighlighted(e) { rig.highlighted = e.control; },
      controlEnabled(e) { control(e.control, { enabled: e.enabled }); },
      lightPress() { gesture('light press'); },
      doubleLightPress() { gesture('double light press'); },
      swipe(e) {
        const arrow = e.velocity < 0 || (e.velocity === 0 && e.delta < 0) ? '←' : '→';
        gesture('swipe ' + Number(e.position).toFixed(2) + ' ' + arrow + (e.phase === 'ended' ? (e.flick ? ' flick' : ' lifted') : ''), e.phase !== 'ended');
      },
      capture(e) { if (e.phase !== 'ended') refreshCounters(); },
      photo(e) { flash(); addPhoto(String(e.path).split('/').pop(), null, true); refreshCounters(); },
      captureFailed(e) { note('No photo: ' + escape(e.reason || e.kind), 4); refreshCounters(); },
      // Lines were lost: what they said is unknown, so read the whole state again.
      dropped() { loadStatus(); },
    };

    let followed = false;
    function follow() {
      const source = new EventSource('/events');
      // The browser reconnects by itself; events sent in between are lost, so read the state
      // again. The daemon may have restarted, which ends the stream too: open it again.
      source.onopen = () => {
        $('offline').hidden = true;
        if (followed) { loadStatus(); loadPhotos(); if (!polling) startStream(); }
        followed = true;
      };
      source.onmessage = (message) => {
        let event;
        try { event = JSON.parse(message.data); } catch (error) { return; }
        const handle = handlers[event.event];
        if (handle) { handle(event); render(); }
      };
      // A refusal (401, 503) closes the source for good; try again later rather than never.
      // Either way the daemon is not there now: say so over the picture until it answers again.
      source.onerror = () => {
        $('offline').hidden = false;
        if (source.readyState === EventSource.CLOSED) setTimeout(follow, 5000);
      };
    }

    /* ---- The overlay and its scale ---- */

    // A control's scale: positions 0...count ("units"), each a value the daemon accepts, as a swipe
    // on the rig moves it: a stepped slider by its step, a continuous one by 1/40 of its range (of
    // its logarithm on a `log` scale, zoom's: 1× → 2× is as far as 4× → 8×), a list slider by
    // entry and a picker by item. `labels` are written under the ticks.
    function scaleOf(c) {
      if (!c) return null;
      if (c.titles || c.kind === 'picker' || 'index' in c) {
        const titles = c.titles || Array.from({ length: c.count || (c.index || 0) + 1 }, (_, i) => String(i));
        return { picker: true, count: titles.length - 1, spacing: 72, unit: c.index || 0, valueAt: (u) => u,
          labels: titles.map((text, unit) => ({ unit, text })) };
      }
      if (Array.isArray(c.values)) {
        const values = c.values;
        const nearest = values.reduce((best, v, i) => Math.abs(v - c.value) < Math.abs(values[best] - c.value) ? i : best, 0);
        return { count: values.length - 1, spacing: 36, unit: nearest, valueAt: (u) => values[u],
          labels: values.map((v, unit) => ({ unit, text: format(c, v) })) };
      }
      const [low, high] = c.range || [0, 1];
      const logarithmic = c.scale === 'log' && !c.step && low > 0;
      const step = c.step || (high - low) / 40;
      const count = logarithmic ? 40 : Math.max(1, Math.floor((high - low) / step + 1e-6));
      // Nine decimals: a third of an EV from a step given to 12 digits lands on zero, not -2e-12.
      const round = (v) => Math.round(v * 1e9) / 1e9;
      const valueAt = logarithmic ? (u) => round(Math.min(high, low * Math.pow(high / low, u / 40)))
                                  : (u) => round(low + u * step);
      const unitOf = logarithmic ? (v) => 40 * Math.log(v / low) / Math.log(high / low) : (v) => (v - low) / step;
      const labels = [];
      // Whole numbers on a range of 2 to 12 (zoom 1-8×, ±2 EV); else the range's power of ten.
      const span = high - low;
      const every = span >= 2 && span <= 12 ? 1 : Math.pow(10, Math.floor(Math.log10(span)));
      for (let k = Math.ceil(low / every - 1e-9); k * every <= high + 1e-9; k++) {
        const v = round(k * every);
        labels.push({ unit: unitOf(v), text: format(c, v) });
      }
      return { count, spacing: Math.max(9, Math.min(30, 320 / count)), unit: unitOf(c.value ?? low), valueAt, labels };
    }
    // A label's text, as the daemon writes values: zoom times its display multiplier, a slider
    // with its unit (the value itself always shows the daemon's own `text`).
    function format(c, v) {
      const shown = c.kind === 'systemZoom' ? v * (c.displayMultiplier || 1) : v;
      const number = Math.round(shown * 100) / 100;
      if (c.kind === 'systemZoom') return number + '×';
      if (c.kind === 'systemExposureBias') return number > 0 ? '+' + number : number < 0 ? '−' + -number : '0';
      return c.unit ? number + ' ' + c.unit : String(number);
    }

    // The drawn position slides towards the value (the phone's scale moves, its mark stays).
    let shown = 0, target = 0, sliding = false, drawnControl = null;
    function slideTo(unit, jump) {
      target = unit;
      if (jump) { shown = unit; draw(); return; }
      if (!sliding) { sliding = true; requestAnimationFrame(slide); }
    }
    function slide() {
      shown += (target - shown) * 0.3;
      if (Math.abs(target - shown) < 0.01) shown = target;
      draw();
      if (shown !== target) requestAnimationFrame(slide); else sliding = false;
    }

    function draw() {
      const width = scaleBox.clientWidth, height = scaleBox.clientHeight;
      if (!width) return;   // hidden: drawn when shown
      const ratio = window.devicePixelRatio || 1;
      if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
        canvas.width = Math.round(width * ratio);
        canvas.height = Math.round(height * ratio);
      }
      const g = canvas.getContext('2d');
      g.setTransform(ratio, 0, 0, ratio, 0, 0);
      g.clearRect(0, 0, width, height);
      const s = scaleOf(rig.controls.get(rig.current));
      if (!s) return;
      const centre = width / 2;
      const at = (unit) => centre + (unit - shown) * s.spacing;
      // Ticks fade towards the ends of the pill, as the phone's do.
      const fade = (x) => Math.max(0, 1 - Math.abs(x - centre) / centre) ** 0.8;
      g.fillStyle = '#fff';
      for (let unit = 0; unit <= s.count; unit++) {
        const x = at(unit);
        if (x < 0 || x > width) continue;
        g.globalAlpha = fade(x) * 0.7;
        g.fillRect(x - 0.5, 6, 1, s.picker ? 12 : 8);
      }
      g.font = '600 11px -apple-system, system-ui, sans-serif';
      g.textAlign = 'center';
      for (const label of s.labels) {
        const x = at(label.unit);
        if (x < -40 || x > width + 40) continue;
        const near = Math.abs(label.unit - shown) < 0.5;
        g.globalAlpha = fade(x);
        g.fillStyle = near ? '#ffd60a' : '#fff';
        if (!s.picker) g.fillRect(x - 0.75, 3, 1.5, 14);
        g.fillText(label.text, x, 36);
      }
      g.globalAlpha = 1;
    }

    const clamp = (unit, s) => Math.min(s.count, Math.max(0, unit));
    function render() {
      const c = rig.controls.get(rig.current);
      // While the rig's controls are inactive, a tap on the picture shows the scale here alone
      // ('remote'): the page adjusts from afar without a press on the rig.
      const state = rig.state === 'inactive' && openHereUntil ? 'remote' : rig.state;
      overlay.hidden = state === 'inactive';
      overlay.dataset.state = state;
      document.body.dataset.controls = state;
      $('control-label').textContent = c ? c.label : '';
      $('control-value').textContent = c && c.text != null ? c.text : '';
      renderChooser();
      if (!drag) {
        const s = scaleOf(c);
        if (s) slideTo(clamp(s.unit, s), rig.current !== drawnControl || overlay.hidden);
        drawnControl = rig.current;
      }
    }

    function renderChooser() {
      const list = $('chooser');
      list.hidden = rig.state !== 'choosing';
      const marked = rig.highlighted ?? rig.current;
      list.replaceChildren(...[...rig.controls.values()].filter((c) => c.enabled !== false).map((c) => {
        const item = document.createElement('li');
        item.setAttribute('role', 'option');
        item.dataset.control = c.id;
        item.textContent = c.label;
        item.setAttribute('aria-selected', String(c.id === marked));
        item.classList.toggle('highlighted', c.id === marked);
        return item;
      }));
    }
    // A tap in the list selects, as a light press on the rig would.
    $('chooser').addEventListener('click', (e) => {
      const item = e.target.closest('li');
      if (item) request('/api/select', { control: item.dataset.control }).catch(() => {});
    });

    // The page's own overlay: a tap on the picture opens the current control's scale here (the
    // rig's overlay stays as it is), and it closes after 5 s without a drag or a key, as the rig's
    // controls close when idle.
    function keepOpenHere() {
      if (!openHereUntil) return;
      openHereUntil = performance.now() + 5000;
      clearTimeout(openHereTimer);
      openHereTimer = setTimeout(function close() {
        if (drag || performance.now() < openHereUntil) { openHereTimer = setTimeout(close, 250); return; }
        openHereUntil = 0;
        render();
      }, 5000);
    }
    $('viewfinder').addEventListener('click', () => {
      if (rig.state !== 'inactive' || !rig.controls.get(rig.current)) return;
      openHereUntil = 1;
      keepOpenHere();
      render();
    });

    /* ---- Dragging the scale sets the value ---- */

    // One unit per tick spacing dragged; dragging left brings higher values under the mark, as the
    // scale follows the finger. Requests go out at most every 100 ms and the last value on release,
    // so a quick drag neither floods the rig nor loses where it stopped.
    let drag = null, pending = null, sendTimer = 0, lastSent = 0;
    function move(c, s, unit) {
      keepOpenHere();
      slideTo(unit, true);
      pending = { control: c, scale: s, unit };
      if (!sendTimer) sendTimer = setTimeout(send, Math.max(0, lastSent + 100 - performance.now()));
    }
    scaleBox.addEventListener('pointerdown', (e) => {
      const c = rig.controls.get(rig.current);
      const s = scaleOf(c);
      if (!s || c.enabled === false) return;
      scaleBox.setPointerCapture(e.pointerId);
      drag = { pointer: e.pointerId, x: e.clientX, start: s.unit, unit: null, control: c, scale: s };
      e.preventDefault();
    });
    scaleBox.addEventListener('pointermove', (e) => {
      if (!drag || e.pointerId !== drag.pointer) return;
      const moved = Math.trunc((drag.x - e.clientX) / drag.scale.spacing);
      if (moved === 0 && drag.unit === null) return;   // not a whole step yet: a tap changes nothing
      const unit = clamp(Math.round(drag.start + moved), drag.scale);
      if (unit === drag.unit) return;
      drag.unit = unit;
      move(drag.control, drag.scale, unit);
    });
    // The arrow keys step from where the scale shows, for a desktop without a touch screen.
    scaleBox.addEventListener('keydown', (e) => {
      const by = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 }[e.key];
      const c = rig.controls.get(rig.current);
      const s = scaleOf(c);
      if (!by || !s || drag || c.enabled === false) return;
      e.preventDefault();
      const unit = clamp(Math.round(target) + by, s);
      if (unit !== target) move(c, s, unit);
    });
    function endDrag(e) {
      if (!drag || e.pointerId !== drag.pointer) return;
      drag = null;
      if (sendTimer) { clearTimeout(sendTimer); send(); }
      render();
    }
    scaleBox.addEventListener('pointerup', endDrag);
    scaleBox.addEventListener('pointercancel', endDrag);
    function send() {
      sendTimer = 0;
      if (!pending) return;
      const { control: c, scale: s, unit } = pending;
      pending = null;
      lastSent = performance.now();
      const body = s.picker ? { control: c.id, index: unit } : { control: c.id, value: s.valueAt(unit) };
      request('/api/set', body).then(({ status, reply }) => {
        if (status >= 400 && status !== 401) note(escape((reply && reply.error) || 'refused (' + status + ')'), 3);
      }).catch(() => {});
    }

    /* ---- Photos ---- */

    let flashes = 0;
    function flash() {
      const white = $('flash');
      white.dataset.flashes = String(++flashes);
      white.classList.add('flash-on');
      setTimeout(() => white.classList.remove('flash-on'), 150);
    }
    function addPhoto(name, thumbnail, newest) {
      const strip = $('photos');
      if ([...strip.children].some((link) => link.dataset.name === name)) return;
      const link = document.createElement('a');
      link.href = '/photos/' + encodeURIComponent(name);
      link.target = '_blank';
      link.dataset.name = name;
      const image = document.createElement('img');
      image.alt = name;
      // No thumbnail (an older server, a file it cannot read): the photo itself, scaled down.
      image.onerror = () => { image.onerror = null; image.src = link.href; };
      image.src = typeof thumbnail === 'string' ? thumbnail : '/thumbs/' + encodeURIComponent(name);
      link.append(image);
      if (newest) strip.prepend(link); else strip.append(link);
      while (strip.children.length > 24) strip.lastElementChild.remove();
    }
    async function loadPhotos() {
      try {
        const { reply } = await request('/photos/');
        for (const photo of (reply && reply.photos) || []) addPhoto(photo.name, photo.thumbnail, false);
        if (reply && typeof reply.total === 'number') { photoTotal = reply.total; showCounters(); }
      } catch (error) { /* the strip fills with the next photo */ }
    }
    $('shutter').addEventListener('click', async () => {
      try {
        const { status, reply } = await request('/api/capture', {});
        if (status >= 400 && status !== 401) note(escape((reply && reply.error) || 'capture refused (' + status + ')'), 4);
      } catch (error) { note('shutter does not answer', 4); }
    });

    /* ---- The viewfinder ---- */

    // Multipart JPEG is one request for every frame; where it fails (iOS Safari has known
    // trouble with it), is slow to start, or ?view=snapshot asks, poll the newest frame instead.
    const appleTouch = /iPhone|iPad|iPod/.test(navigator.userAgent) || (/Macintosh/.test(navigator.userAgent) && navigator.maxTouchPoints > 1);
    // The preview the picture needs: its displayed width in device pixels (the server snaps it to
    // a few widths within its bound), so a desktop is not shown a phone's preview stretched.
    function wantedWidth() {
      const aspect = frame.naturalWidth && frame.naturalHeight ? frame.naturalWidth / frame.naturalHeight : 16 / 9;
      const shown = Math.min(innerWidth, innerHeight * aspect);
      return Math.max(1, Math.round(shown * (window.devicePixelRatio || 1)));
    }
    let askedWidth = 0;
    let streams = 0;
    function startStream() {
      frame.dataset.mode = 'stream';
      let loaded = false;
      const timer = setTimeout(() => { if (!loaded) startPolling(); }, 3000);
      frame.onload = () => { loaded = true; clearTimeout(timer); fitOnce(); };
      frame.onerror = () => { clearTimeout(timer); startPolling(); };
      // Another URL each time after the first, so the browser asks anew instead of reusing the image.
      askedWidth = wantedWidth();
      frame.src = '/stream?width=' + askedWidth + (streams++ ? '&again=' + Date.now() : '');
    }
    let polling = false;
    function startPolling() {
      if (polling) return;
      polling = true;
      frame.onload = frame.onerror = null;
      frame.removeAttribute('src');   // closes the stream's connection
      frame.dataset.mode = 'snapshot';
      let url = null;
      // The next request only once this frame has been shown: a slow link gets fewer frames, not a queue.
      async function next() {
        if (document.hidden) { document.addEventListener('visibilitychange', next, { once: true }); return; }
        const started = performance.now();
        let pause = 100;
        try {
          askedWidth = wantedWidth();
          const response = await fetch('/snapshot?width=' + askedWidth, { cache: 'no-store' });
          if (!response.ok) throw new Error('snapshot ' + response.status);
          const blob = await response.blob();
          const previous = url;
          url = URL.createObjectURL(blob);
          // Decoded aside first, so the swap shows no empty frame in between.
          const image = new Image();
          image.src = url;
          await image.decode();
          frame.src = url;
          if (previous) URL.revokeObjectURL(previous);
          fitOnce();
        } catch (error) {
          pause = 1000;   // no camera yet, or the rig restarting
        }
        setTimeout(next, Math.max(0, pause - (performance.now() - started)));
      }
      next();
    }

    // The grid covers the picture, not its bars; the overlay sits on the picture's lower part,
    // above the shutter bar, as the phone's sits on its viewfinder.
    function fit() {
      const box = frame.getBoundingClientRect();
      const w = frame.naturalWidth || 16, h = frame.naturalHeight || 9;
      const k = Math.min(box.width / w, box.height / h);
      const width = w * k, height = h * k, left = (box.width - width) / 2, top = (box.height - height) / 2;
      Object.assign($('thirds').style, { left: left + 'px', top: top + 'px', width: width + 'px', height: height + 'px' });
      const bar = $('bottom').offsetHeight;
      overlay.style.bottom = Math.max(bar, box.height - top - height) + 12 + 'px';
      draw();
    }
    // A frame of another size than the last moves the grid and the overlay; the same size, nothing.
    let fitted = '';
    function fitOnce() {
      const size = frame.naturalWidth + 'x' + frame.naturalHeight;
      if (size !== fitted) { fitted = size; fit(); }
    }
    addEventListener('resize', fit);
    // A window made much wider or narrower asks for a preview of its new size (a poll asks each time).
    let resizeTimer = 0;
    addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        const wanted = wantedWidth();
        if (!polling && frame.dataset.mode === 'stream' && Math.abs(wanted - askedWidth) > askedWidth / 5) startStream();
      }, 400);
    });

    // Mirror and grid are per browser: a selfie rig wants the mirror, the desk next to it not.
    function toggle(button, key, apply) {
      const set = (on) => { button.setAttribute('aria-pressed', String(on)); apply(on); };
      let saved = null;
      try { saved = localStorage.getItem(key); } catch (error) { /* storage off: not kept */ }
      set(saved === '1');
      button.addEventListener('click', () => {
        const on = button.getAttribute('aria-pressed') !== 'true';
        try { localStorage.setItem(key, on ? '1' : '0'); } catch (error) { /* not kept */ }
        set(on);
      });
    }
    toggle($('mirror'), 'shutter.mirror', (on) => document.body.classList.toggle('mirrored', on));
    toggle($('grid'), 'shutter.grid', (on) => { $('thirds').hidden = !on; });

    follow();   // first, so no event falls between the status and the stream
    loadStatus();
    loadPhotos();
    if (appleTouch || new URLSearchParams(location.search).get('view') === 'snapshot') startPolling(); else startStream();
    fit();
    </script>
    </body></html>

    """#
}
