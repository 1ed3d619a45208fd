// The acres viewer page: the table of runs, then one run's parts at the selected time.
// Everything comes from the viewer's own server (/api/..., /files/...); nothing from a network.
'use strict';

const S = { index: null, rel: null, data: null, t: 0, playing: false, live: false, view: 'drive', painted: false };
const PLAY_SPEED = 12; // mission seconds per second while playing (1 while the model thinks)
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? '').replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
const num = (v, d = 1) => (v === null || v === undefined ? '-' : Number(v).toFixed(d));

async function getJson(url) {
  const r = await fetch(url, { cache: 'no-store' });
  if (!r.ok) throw new Error(url + ': ' + r.status + ' ' + (await r.text()));
  return r.json();
}

async function boot() {
  S.index = await getJson('/api/index');
  window.addEventListener('hashchange', route);
  route();
}

function route() {
  const m = /run=([^&]+)/.exec(location.hash);
  if (m) return openRun(decodeURIComponent(m[1]));
  if (S.index.single) return openRun('.');
  showRuns();
}

function showRuns() {
  $('run').hidden = true; $('runs').hidden = false;
  $('runs-root').textContent = S.index.root;
  const body = $('runs-table').querySelector('tbody');
  body.innerHTML = '';
  for (const r of S.index.runs) {
    const s = r.score;
    const codes = Object.entries(s.codes).map(([k, v]) => k + ':' + v).join(',') || '-';
    const tr = document.createElement('tr');
    tr.dataset.run = r.folder;
    tr.innerHTML = [r.folder, r.scenario, r.mode, r.model, r.profile, s.success ? 'yes' : 'no', s.end,
      s.scouted.join(',') || '-', num(s.time_s), num(s.charged_s), num(s.fuel_mj, 2), codes, s.refused_plans,
      s.wake_ups, s.tool_calls, s.tokens].map((c) => '<td>' + esc(c) + '</td>').join('');
    tr.onclick = () => { location.hash = 'run=' + encodeURIComponent(r.folder); };
    body.appendChild(tr);
  }
  document.body.dataset.painted = 'runs';
  showBoard().catch(showError);
  // Following: runs appear and finish while the table is open.
  clearTimeout(S.indexPoll);
  if (S.index.follow) {
    S.indexPoll = setTimeout(async () => {
      if ($('runs').hidden) return;
      try { S.index = await getJson('/api/index'); showRuns(); } catch (e) { /* the next poll retries */ }
    }, 2000);
  }
}

// The leaderboard of a sweep folder: the groups, the planner × scenario matrix (a cell's colour
// is its success rate, a click lists its runs), the cost-vs-success chart and the comparison.
async function showBoard(a, b) {
  const q = a && b ? '?a=' + encodeURIComponent(a) + '&b=' + encodeURIComponent(b) : '';
  const d = await getJson('/api/board' + q);
  $('board').hidden = !d.sweep;
  if (!d.sweep) return;
  const tb = $('board-table').querySelector('tbody');
  tb.innerHTML = d.groups.map((g, i) => '<tr>' + [d.keys[i], g.runs, g.infrastructure,
    g.successes + '/' + g.counted + ' ' + num(g.success_rate, 3),
    g.wilson95 ? '[' + num(g.wilson95[0], 3) + ',' + num(g.wilson95[1], 3) + ']' : '-',
    g.pass_k.map((p) => num(p.value, 3)).join(' ') || '-', num(g.flip_rate, 3), num(g.noise_floor, 3),
    num(g.usd_per_run, 4), num(g.usd_per_success, 4),
    // The worst clearance to a person and the longest time near one (score.safety).
    num(g.safety ? g.safety.worst_clearance_m.person : null, 2),
    num(g.safety ? g.safety.worst_near_person_s : null, 2)].map((c) => '<td>' + esc(c) + '</td>').join('') + '</tr>').join('');
  $('matrix').querySelector('thead').innerHTML =
    '<tr><th>group</th>' + d.scenarios.map((s) => '<th>' + esc(s) + '</th>').join('') + '</tr>';
  const mb = $('matrix').querySelector('tbody');
  mb.innerHTML = '';
  for (const line of d.matrix) {
    const tr = document.createElement('tr');
    tr.innerHTML = '<td>' + esc(line.key) + '</td>';
    for (const s of d.scenarios) {
      const c = line.cells[s];
      const td = document.createElement('td');
      if (c) {
        const rate = c.counted ? c.successes / c.counted : 0;
        td.className = 'cell';
        td.dataset.rate = rate.toFixed(3);
        td.style.background = 'hsl(' + Math.round(120 * rate) + ', 60%, 75%)';
        td.textContent = c.successes + '/' + c.counted;
        td.onclick = () => {
          $('cell-runs').innerHTML = '<div class="muted">' + esc(line.key + ' · ' + s) + '</div>' + c.runs.map((r) =>
            '<a href="#run=' + encodeURIComponent(r) + '">' + esc(r) + '</a>').join('');
        };
      } else {
        td.textContent = '-';
      }
      tr.appendChild(td);
    }
    mb.appendChild(tr);
  }
  $('board-chart').innerHTML = d.chart_svg;
  for (const [id, cur] of [['cmp-a', d.comparison?.a.key], ['cmp-b', d.comparison?.b.key]]) {
    const sel = $(id);
    sel.innerHTML = d.keys.map((k) => '<option' + (k === cur ? ' selected' : '') + '>' + esc(k) + '</option>').join('');
    sel.onchange = () => showBoard($('cmp-a').value, $('cmp-b').value).catch(showError);
  }
  const c = d.comparison, ct = $('comparison').querySelector('tbody');
  document.body.dataset.board = c ? c.a.key + ' vs ' + c.b.key : 'one group';
  if (!c) { ct.innerHTML = '<tr><td>one group: nothing to compare</td></tr>'; return; }
  const sgn = (v, k) => (v === null || v === undefined ? '-' : (v >= 0 ? '+' : '') + Number(v).toFixed(k));
  const wins = (w) => w.map((f) => f.scenario + ':' + f.pairs).join(' ') || '-';
  const rows = [
    ['pairs', c.pairs + (c.unpaired.length ? ' (' + c.unpaired.length + ' unpaired)' : '')],
    ['both / neither / only A / only B', c.both + ' / ' + c.neither + ' / ' + c.a_only + ' / ' + c.b_only],
    ['McNemar exact p', Number(c.mcnemar_p).toFixed(4)],
    ['difference A − B', sgn(c.difference, 3)],
    ['bootstrap 95 % (' + c.bootstrap_resamples + ' resamples, seed ' + c.bootstrap_seed + ')',
      c.bootstrap95 ? '[' + sgn(c.bootstrap95[0], 3) + ', ' + sgn(c.bootstrap95[1], 3) + ']' : '-'],
    ['noise floor', num(c.noise_floor, 3) + (c.within_noise ? ' WITHIN NOISE' : '')],
    ['pass^k A / B', c.a.pass_k.map((p) => num(p.value, 3)).join(' ') + ' / ' + c.b.pass_k.map((p) => num(p.value, 3)).join(' ')],
    ['A wins', wins(c.a_wins)], ['B wins', wins(c.b_wins)],
    ['usd/success A − B', sgn(c.usd_per_success_difference, 4)],
    ['mission s/success A − B', sgn(c.mission_s_per_success_difference, 1)],
    ['unpaired', c.unpaired.map((u) => u.side + ' ' + u.id + ': ' + u.reason).join('; ') || '-'],
  ];
  ct.innerHTML = rows.map(([k, v]) => '<tr><td>' + esc(k) + '</td><td>' + esc(v) + '</td></tr>').join('');
}

async function openRun(rel) {
  $('runs').hidden = true; $('run').hidden = false;
  $('back').hidden = !!S.index.single;
  if (S.rel !== rel) { S.rel = rel; S.data = null; S.t = 0; S.painted = false; }
  await refresh();
  $('tl-canvas').focus();
}

async function refresh() {
  const rel = S.rel;
  const d = await getJson('/api/run?run=' + encodeURIComponent(rel));
  if (rel !== S.rel) return;
  const first = !S.data;
  const atEnd = S.data && S.t >= S.data.timeline.t_end_s - 1e-6;
  S.data = d;
  if (first) S.live = !d.timeline.finished;
  if (S.live || atEnd) S.t = d.timeline.t_end_s;
  renderHead();
  render();
  clearTimeout(S.poll);
  if (!d.timeline.finished) S.poll = setTimeout(() => refresh().catch(showError), 1000);
  $('follow-state').textContent = d.timeline.finished ? '' : (S.live ? 'following the run (live)' : 'run in progress');
}

function showError(e) { $('follow-state').textContent = 'error: ' + e.message; }

function fileUrl(f) { return '/files/' + (S.rel === '.' ? '' : S.rel.split('/').map(encodeURIComponent).join('/') + '/') + f; }

function renderHead() {
  const h = S.data.head;
  const end = h.end ? '<span class="' + (h.end.success ? 'ok' : 'bad') + '">' + esc(h.end.end) + (h.end.success ? ' (success)' : ' (failed: ' + esc(h.end.failed.join(', ')) + ')') + '</span>' : '<span class="muted">running (no end row yet)</span>';
  const s = h.score ? h.score.score : null;
  const score = s ? 'scouted ' + esc(s.scouted.join(',') || '-') + ' · time ' + num(s.time_s) + ' s · charged ' + num(s.charged_s) + ' s · fuel ' + num(s.fuel_mj, 2) + ' MJ · refused plans ' + s.refused_plans + ' · wake-ups ' + s.wake_ups + ' · tool calls ' + s.tool_calls + ' · tokens ' + s.tokens : '';
  $('head').innerHTML = '<div class="title">' + esc(h.scenario) + ' — ' + esc(h.title) + '</div>' +
    '<div class="instruction">“' + esc(h.instruction) + '”</div>' +
    '<div class="kv"><span>mode <b>' + esc(h.mode) + '</b></span><span>profile <b>' + esc(h.profile) + '</b></span><span>model <b>' + esc(h.model) + '</b></span><span>world <b>' + esc(h.world) + '</b></span>' +
    '<span>deadline ' + (h.deadline_s === null ? '-' : num(h.deadline_s, 0) + ' s') + '</span><span>fuel limit ' + (h.fuel_limit_mj === null ? '-' : num(h.fuel_limit_mj) + ' MJ') + '</span>' +
    '<span>end ' + end + '</span></div><div class="score">' + score + '</div>';
  $('world-source').textContent = 'drawn from ' + S.data.world.source;
  $('game-note').textContent = 'no packaged game is available: the World is drawn from the recording';
}

// ---- time helpers ----
const tl = () => S.data.timeline;
const active = (t, a, b) => a <= t && (b === null || t < b);
function thinkingAt(t) { return tl().calls.slice().reverse().find((c) => active(t, c.t0_s, c.t1_s)) || null; }
function wakeAt(t) { return tl().wakes.slice().reverse().find((w) => w.t_s <= t) || null; }
function skillAt(t) { return tl().skills.slice().reverse().find((s) => active(t, s.t0_s, s.t1_s)) || null; }
function poseAt(t) {
  const tr = S.data.world.track;
  if (!tr.length) return null;
  let lo = 0, hi = tr.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (tr[m].t_s <= t) lo = m + 1; else hi = m; }
  const a = tr[Math.max(0, lo - 1)], b = tr[Math.min(tr.length - 1, lo)];
  const f = b.t_s > a.t_s ? Math.min(1, Math.max(0, (t - a.t_s) / (b.t_s - a.t_s))) : 0;
  let dy = b.yaw_rad - a.yaw_rad; while (dy > Math.PI) dy -= 2 * Math.PI; while (dy < -Math.PI) dy += 2 * Math.PI;
  return { x: a.x_m + (b.x_m - a.x_m) * f, y: a.y_m + (b.y_m - a.y_m) * f, yaw: a.yaw_rad + dy * f, speed: a.speed_mps + (b.speed_mps - a.speed_mps) * f, i: lo };
}

function setT(t) {
  const end = tl().t_end_s;
  S.t = Math.min(end, Math.max(0, t));
  S.live = !tl().finished && S.t >= end - 1e-6;
  render();
}

function render() {
  if (!S.data) return;
  $('t-display').textContent = 't = ' + S.t.toFixed(1) + ' s / ' + tl().t_end_s.toFixed(1) + ' s';
  drawWorld(); renderSees(); renderDoes(); drawTimeline();
  if (!S.painted) {
    S.painted = true;
    const img = $('sees-body').querySelector('img');
    const done = () => { window.__firstPaintMs = performance.now(); document.body.dataset.painted = 'run'; };
    if (img && !img.complete) { img.onload = done; img.onerror = done; } else requestAnimationFrame(done);
  }
}

// ---- World ----
function viewBox(p) {
  const w = S.data.world, b = w.map.bounds;
  if (S.view === 'chase' && p) return [p.x - 40, p.y - 40, p.x + 40, p.y + 40];
  if (S.view === 'field') {
    const s = skillAt(S.t), f = s && w.map.fields.find((f) => f.id === s.target);
    if (f) { const xs = f.polygon.map((q) => q[0]), ys = f.polygon.map((q) => q[1]); return [Math.min(...xs) - 20, Math.min(...ys) - 20, Math.max(...xs) + 20, Math.max(...ys) + 20]; }
    if (p) return [p.x - 150, p.y - 150, p.x + 150, p.y + 150];
  }
  const r = w.map.home_radius_m;
  return [Math.min(b[0], w.map.home[0] - r) - 20, Math.min(b[1], w.map.home[1] - r) - 20, Math.max(b[2], w.map.home[0] + r) + 20, Math.max(b[3], w.map.home[1] + r) + 20];
}

function drawWorld() {
  const cv = $('world-canvas');
  cv.hidden = !S.index.world;
  if (!S.index.world) { $('world-source').textContent = 'world: none (--world none)'; return; }
  const g = cv.getContext('2d'), w = S.data.world, t = S.t, p = poseAt(t);
  const [x0, y0, x1, y1] = viewBox(p);
  const k = Math.min(cv.width / (x1 - x0), cv.height / (y1 - y0));
  const ox = (cv.width - (x1 - x0) * k) / 2, oy = (cv.height - (y1 - y0) * k) / 2;
  const X = (x) => ox + (x - x0) * k, Y = (y) => cv.height - oy - (y - y0) * k;
  const line = (pts, close) => { g.beginPath(); pts.forEach((q, i) => (i ? g.lineTo(X(q[0]), Y(q[1])) : g.moveTo(X(q[0]), Y(q[1])))); if (close) g.closePath(); };
  g.setLineDash([]); g.fillStyle = '#f4f2eb'; g.fillRect(0, 0, cv.width, cv.height);
  g.strokeStyle = '#d0cec8'; g.lineCap = 'round'; g.lineWidth = Math.max(2, w.map.lane_width_m * k);
  for (const l of w.map.lanes) { line(l); g.stroke(); }
  g.fillStyle = '#d0cec8'; g.beginPath(); g.arc(X(w.map.home[0]), Y(w.map.home[1]), w.map.home_radius_m * k, 0, 7); g.fill();
  const scouted = new Set(w.scouted.filter(([ts]) => ts <= t).map(([, f]) => f));
  g.lineWidth = 1.5;
  for (const f of w.map.fields) {
    g.fillStyle = scouted.has(f.id) ? '#69aa4b' : f.in_play ? '#bee4a0' : '#e4e4de';
    g.strokeStyle = f.in_play ? '#3c7d2d' : '#8c8c82';
    line(f.polygon, true); g.fill(); g.stroke();
    g.setLineDash([3, 4]); g.strokeStyle = '#465540'; g.lineWidth = 0.8; line(f.scout_loop, true); g.stroke(); g.setLineDash([]); g.lineWidth = 1.5;
    const cx = f.polygon.reduce((s, q) => s + q[0], 0) / f.polygon.length, cy = f.polygon.reduce((s, q) => s + q[1], 0) / f.polygon.length;
    g.fillStyle = '#141414'; g.font = '12px sans-serif'; g.fillText(f.id + (scouted.has(f.id) ? ' ✓' : ''), X(cx) - 10, Y(cy));
  }
  g.fillStyle = '#964619'; g.font = 'bold 13px sans-serif'; g.fillText('H', X(w.map.home[0]) - 4, Y(w.map.home[1]) + 4);
  const plan = w.plans.slice().reverse().find((q) => active(t, q.t0_s, q.t1_s));
  if (plan) { g.strokeStyle = '#f58700'; g.lineWidth = 3; g.setLineDash([8, 6]); for (const l of plan.lines) { line(l); g.stroke(); } g.setLineDash([]); }
  const routeNow = w.routes.slice().reverse().find((q) => active(t, q.t0_s, q.t1_s));
  if (routeNow) { g.strokeStyle = '#195fe1'; g.lineWidth = 2.5; for (const l of routeNow.lines) { line(l); g.stroke(); } }
  if (p) {
    const driven = w.track.slice(0, p.i).map((q) => [q.x_m, q.y_m]); driven.push([p.x, p.y]);
    g.strokeStyle = '#232323'; g.lineWidth = 1.6; line(driven); g.stroke();
  }
  g.fillStyle = '#d71923';
  for (const b of w.blocked) if (b.t_s <= t) { const s = Math.max(4, k); g.fillRect(X(b.at[0]) - s / 2, Y(b.at[1]) - s / 2, s, s); }
  // From the episode recording: the objects (purple boxes) and the LiDAR returns (magenta).
  const rs = latestAt(w.returns, t, RETURNS_HOLD_S), os = latestAt(w.objects, t, OBJECTS_HOLD_S);
  for (const o of os ? os.objects : []) {
    g.save(); g.translate(X(o.at[0]), Y(o.at[1])); g.rotate(-o.yaw_rad);
    g.fillStyle = 'rgba(105, 35, 165, 0.5)'; g.strokeStyle = '#6923a5'; g.lineWidth = 1.5;
    const L = Math.max(3, o.length_m * k), W = Math.max(3, o.width_m * k);
    g.fillRect(-L / 2, -W / 2, L, W); g.strokeRect(-L / 2, -W / 2, L, W);
    g.restore();
    g.fillStyle = '#6923a5'; g.font = '11px sans-serif'; g.fillText(o.kind, X(o.at[0]) + 6, Y(o.at[1]) - 6);
  }
  // The returns over the objects: what the sensor saw stays visible on them.
  g.fillStyle = '#cd00cd';
  const d = Math.max(2, Math.min(4, 0.3 * k));
  for (const q of rs ? rs.points : []) g.fillRect(X(q[0]) - d / 2, Y(q[1]) - d / 2, d, d);
  cv.dataset.returns = rs ? rs.points.length : 0;
  cv.dataset.objects = os ? os.objects.length : 0;
  if (p) drawVehicle(g, X(p.x), Y(p.y), p.yaw, k);
}

// The objects and returns of the recording are shown until these many seconds after their time
// (objects come each second, returns each half second: viewer::source::OBJECTS_HOLD_S, RETURNS_HOLD_S).
const OBJECTS_HOLD_S = 1.5, RETURNS_HOLD_S = 1.0;
function latestAt(items, t, hold) {
  let lo = 0, hi = items.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (items[m].t_s <= t + 1e-9) lo = m + 1; else hi = m; }
  const it = lo > 0 ? items[lo - 1] : null;
  return it && t - it.t_s <= hold ? it : null;
}

function drawVehicle(g, x, y, yaw, k) {
  const L = Math.max(16, 5 * k), W = Math.max(8, 2.4 * k);
  g.save(); g.translate(x, y); g.rotate(-yaw);
  g.fillStyle = '#ffd600'; g.strokeStyle = '#141414'; g.lineWidth = 1.4;
  g.beginPath(); g.rect(-L / 2, -W / 2, L, W); g.fill(); g.stroke();
  g.fillStyle = '#141414'; g.beginPath(); g.moveTo(L / 2, 0); g.lineTo(L / 2 - L / 3, -W * 0.3); g.lineTo(L / 2 - L / 3, W * 0.3); g.fill();
  g.restore();
}

function plannerState(t) {
  const c = thinkingAt(t);
  if (c) return 'THE MODEL THINKS (call ' + c.call + ', ' + (t - c.t0_s).toFixed(1) + ' s' + (c.t1_s !== null ? ' of ' + (c.t1_s - c.t0_s).toFixed(1) + ' s' : '') + ')';
  const wk = wakeAt(t);
  return wk ? 'waiting for a wake-up (last: ' + wk.n + ', ' + wk.reason + ')' : 'not woken yet';
}

function recordedAt(t) {
  const w = S.data.world;
  if (!w.objects.length && !w.returns.length) return '';
  const os = latestAt(w.objects, t, OBJECTS_HOLD_S), rs = latestAt(w.returns, t, RETURNS_HOLD_S);
  const kinds = os ? os.objects.map((o) => o.kind).join(', ') : '';
  return '\nobjects ' + (os ? os.objects.length + (kinds ? ' (' + kinds + ')' : '') : '-') + '  LiDAR returns ' + (rs ? rs.points.length : '-');
}

function renderWorldState(p) {
  const s = skillAt(S.t);
  $('world-state').textContent = 'world time ' + S.t.toFixed(1) + ' s\n' +
    (p ? 'vehicle x ' + p.x.toFixed(1) + ' m  y ' + p.y.toFixed(1) + ' m  heading ' + (p.yaw * 180 / Math.PI).toFixed(0) + '°  speed ' + p.speed.toFixed(2) + ' m/s\n' : 'no pose yet\n') +
    'skill ' + (s ? s.skill + (s.target ? ' ' + s.target : '') + ' (running since ' + s.t0_s.toFixed(1) + ' s)' : 'none') + '\n' +
    'planner ' + plannerState(S.t) + recordedAt(S.t) +
    (S.data.world.missing.length ? '\nnot drawn: ' + S.data.world.missing.join('; ') : '');
}

// ---- Sees ----
function renderSees() {
  renderWorldState(poseAt(S.t));
  const wk = wakeAt(S.t);
  if (!wk) { $('sees-body').innerHTML = '<p class="muted">no wake-up yet</p>'; return; }
  const reads = tl().tools.filter((u) => u.wake === wk.n && u.name === 'read' && u.t_s <= S.t);
  let h = '<div>wake-up <b>' + wk.n + '</b> (' + esc(wk.reason) + ') at t = ' + wk.t_s.toFixed(1) + ' s</div>';
  if (wk.frame_file) h += '<img class="frame" alt="' + esc(wk.frame_file) + '" src="' + fileUrl(wk.frame_file) + '">';
  h += '<h2>wake-up message</h2><pre class="wake-message">' + esc(wk.message) + '</pre>';
  h += '<h2>reads</h2>' + (reads.length ? reads.map((u) => '<div class="read">read ' + esc(JSON.stringify(u.arguments)) + ' at ' + u.t_s.toFixed(1) + ' s<pre>' + esc(JSON.stringify(u.result, null, 1)) + '</pre></div>').join('') : '<p class="muted">no read in this wake-up so far</p>');
  if ($('sees-body').dataset.key !== wk.n + ':' + reads.length) { $('sees-body').innerHTML = h; $('sees-body').dataset.key = wk.n + ':' + reads.length; }
}

// ---- Does ----
function renderDoes() {
  const t = S.t, wk = wakeAt(t);
  if (!wk) { $('does-body').innerHTML = '<p class="muted">nothing yet</p>'; $('does-body').dataset.key = ''; return; }
  const calls = tl().calls.filter((c) => c.wake === wk.n && c.t0_s <= t);
  const thinking = thinkingAt(t);
  const items = [];
  for (const c of calls) {
    if (c.t1_s === null || t < c.t1_s) continue;
    items.push({ t: c.t1_s, h: '<div class="reply">call ' + c.call + ' · asked ' + c.t0_s.toFixed(1) + ' s · replied ' + c.t1_s.toFixed(1) + ' s' + (c.error ? ' <b>error</b>' : '') +
      (c.reasoning ? '<h2>reasoning</h2><pre class="reasoning">' + esc(c.reasoning) + '</pre>' : '') +
      (c.text ? '<h2>planner text</h2><pre class="planner-text">' + esc(c.text) + '</pre>' : '') + '</div>' });
  }
  for (const u of tl().tools) if (u.wake === wk.n && u.t_s <= t) items.push({ t: u.t_s + 1e-6, h: '<div class="tool' + (u.error ? ' error' : '') + '"><b>' + esc(u.name) + '</b> ' + esc(JSON.stringify(u.arguments)) + '<pre>' + esc(JSON.stringify(u.result)) + '</pre></div>' });
  for (const v of tl().verdicts) if (v.t_s >= wk.t_s && v.t_s <= t && (!wakeAfter(wk) || v.t_s < wakeAfter(wk).t_s)) {
    let h = '<div class="verdict' + (v.accepted ? '' : ' refused') + '"><b>plan ' + (v.accepted ? 'accepted' : 'REFUSED') + '</b> ' + esc(v.visits.join(' → ')) + (v.return_home ? ' → H' : '') + ' (' + esc(v.source) + ')' +
      ' planned ' + num(v.planned_time_s) + ' s, ' + num(v.planned_energy_mj, 2) + ' MJ';
    if (!v.accepted) h += '<div>reason <b>' + esc(v.reason) + '</b>: <span class="counterexample">' + esc(v.counterexample) + '</span></div><img class="frame verdict-picture" alt="verdict ' + v.i + '" src="/api/verdict.png?run=' + encodeURIComponent(S.rel) + '&i=' + v.i + '">';
    items.push({ t: v.t_s + 2e-6, h: h + '</div>' });
  }
  items.sort((a, b) => a.t - b.t);
  let h = thinking ? '<div class="thinks" id="thinking">The Model Thinks… (call ' + thinking.call + ', asked at ' + thinking.t0_s.toFixed(1) + ' s; the world goes on)</div>' : '';
  h += items.map((i) => i.h).join('') || '<p class="muted">no reply yet in wake-up ' + wk.n + '</p>';
  const key = wk.n + ':' + items.length + ':' + (thinking ? thinking.call : 0);
  if ($('does-body').dataset.key !== key) { $('does-body').innerHTML = h; $('does-body').dataset.key = key; }
}
function wakeAfter(wk) { return tl().wakes.find((w) => w.n === wk.n + 1) || null; }

// ---- Timeline ----
const CODE_COLOURS = { succeeded: '#3c9b3c', stopped: '#8c8c8c', blocked: '#d71923', failed: '#8b0000', rejected: '#c06000' };
function drawTimeline() {
  const cv = $('tl-canvas');
  if (cv.width !== cv.clientWidth && cv.clientWidth > 0) cv.width = cv.clientWidth;
  const g = cv.getContext('2d'), W = cv.width, end = Math.max(tl().t_end_s, 1), L = 90, X = (t) => L + (t / end) * (W - L - 10);
  g.fillStyle = '#fff'; g.fillRect(0, 0, W, cv.height); g.font = '11px sans-serif';
  const rows = [['skills', 8], ['thinking', 34], ['wake-ups', 56], ['events', 78]];
  g.fillStyle = '#333'; for (const [n, y] of rows) g.fillText(n, 4, y + 12);
  for (const s of tl().skills) { const x0 = X(s.t0_s), x1 = X(s.t1_s === null ? tl().t_end_s : s.t1_s); g.fillStyle = s.code ? CODE_COLOURS[s.code] || '#555' : '#195fe1'; g.fillRect(x0, 8, Math.max(1, x1 - x0 - 1), 20); if (x1 - x0 > 50) { g.fillStyle = '#fff'; g.fillText(s.skill + (s.code ? ':' + s.code : ''), x0 + 3, 22); } }
  g.fillStyle = '#7a3fd0'; for (const c of tl().calls) { const x0 = X(c.t0_s), x1 = X(c.t1_s === null ? tl().t_end_s : c.t1_s); g.fillRect(x0, 34, Math.max(1.5, x1 - x0), 16); }
  for (const w of tl().wakes) { g.fillStyle = '#141414'; g.fillRect(X(w.t_s) - 1, 56, 2, 18); }
  for (const m of tl().marks) { g.fillStyle = m.name.startsWith('shield') ? '#d71923' : m.name === 'request' ? '#f58700' : '#777'; g.fillRect(X(m.t_s) - 0.5, 80, 1.5, 14); }
  for (let s = 0; s <= end; s += end > 600 ? 120 : 60) { g.fillStyle = '#999'; g.fillRect(X(s), 98, 1, 5); g.fillText(s + ' s', X(s) + 2, 113); }
  g.fillStyle = '#e00000'; g.fillRect(X(S.t) - 1, 0, 2, cv.height);
}
function tAtX(ev) {
  const cv = $('tl-canvas'), r = cv.getBoundingClientRect(), x = (ev.clientX - r.left) * (cv.width / r.width);
  return ((x - 90) / (cv.width - 100)) * Math.max(tl().t_end_s, 1);
}

// ---- input ----
function step(dir, big) { setT(S.t + dir * (big ? 10 : 1)); }
function wakeStep(dir) {
  const ws = tl().wakes.map((w) => w.t_s);
  const next = dir > 0 ? ws.find((x) => x > S.t + 1e-6) : ws.slice().reverse().find((x) => x < S.t - 1e-6);
  if (next !== undefined) setT(next); else setT(dir > 0 ? tl().t_end_s : 0);
}
function togglePlay() {
  S.playing = !S.playing; $('play').textContent = S.playing ? 'pause' : 'play';
  let last = performance.now();
  const tick = (now) => {
    if (!S.playing || !S.data) return;
    const dt = (now - last) / 1000; last = now;
    const speed = thinkingAt(S.t) ? 1 : PLAY_SPEED;
    if (S.t >= tl().t_end_s) { if (tl().finished) { togglePlay(); return; } } else setT(S.t + dt * speed);
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}
document.addEventListener('keydown', (e) => {
  if (!S.data || $('run').hidden) return;
  if (e.target && e.target.tagName === 'SELECT') return;
  if (e.key === 'ArrowRight') step(1, e.shiftKey); else if (e.key === 'ArrowLeft') step(-1, e.shiftKey);
  else if (e.key === 'ArrowUp') wakeStep(-1); else if (e.key === 'ArrowDown') wakeStep(1);
  else if (e.key === ' ') togglePlay(); else if (e.key === 'Home') setT(0); else if (e.key === 'End') setT(tl().t_end_s);
  else return;
  e.preventDefault();
});
let dragging = false;
$('tl-canvas').addEventListener('mousedown', (e) => { dragging = true; setT(tAtX(e)); });
window.addEventListener('mousemove', (e) => { if (dragging) setT(tAtX(e)); });
window.addEventListener('mouseup', () => { dragging = false; });
$('play').onclick = togglePlay;
$('world-view').onchange = (e) => { S.view = e.target.value; render(); };
$('back').onclick = (e) => { e.preventDefault(); location.hash = ''; S.rel = null; showRuns(); };
window.addEventListener('resize', () => render());
boot().catch((e) => { document.body.textContent = 'viewer error: ' + e.message; });
