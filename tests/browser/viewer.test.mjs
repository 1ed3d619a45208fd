// The viewer in a real headless browser (Debian chromium, driven by playwright-core): a finished
// run, a recorded run's World with the objects and LiDAR returns of its episode.mcap
// (--world bag), a run in progress (--follow, rows written while the page is open), and a sweep
// folder's page (the leaderboard, the planner × scenario matrix, the chart, the comparison). Checks
// each part's content, scrubs the timeline with the mouse and the keys, saves screenshots under
// target/, and asserts that ../ and absolute-path requests are refused.
//
//   node tests/browser/viewer.test.mjs [path/to/acres-harness]
//
// Exit 0 when every check holds; a failed check throws (exit 1).
import { chromium } from 'playwright-core';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXE = path.resolve(process.argv[2] || path.join(ROOT, 'target/debug/acres-harness'));
const SHOTS = path.join(ROOT, 'target/browser');
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const children = [];
const cleanup = () => { for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } } };
process.on('exit', cleanup);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, fn, ms = 15000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await sleep(50);
  }
}

/** Starts `acres-harness view ...` and resolves with its URL (the first line of stdout). */
function view(args) {
  return new Promise((resolve, reject) => {
    const c = spawn(EXE, ['view', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(c);
    let out = '';
    c.stdout.on('data', (d) => { out += d; const nl = out.indexOf('\n'); if (nl >= 0) resolve(out.slice(0, nl).trim()); });
    c.on('exit', (code) => reject(new Error('view exited with ' + code)));
  });
}

function makeRun(out, scenario) {
  execFileSync(EXE, ['run', '--scenario', scenario, '--out', out, '--quiet'], { cwd: ROOT, stdio: 'inherit' });
  return path.join(out, fs.readdirSync(out)[0]);
}

async function browser() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'acres-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: FLAGS, viewport: { width: 1680, height: 1050 },
  });
  return { ctx, profile };
}

const text = (page, sel) => page.locator(sel).innerText();
const tNow = async (page) => Number((await text(page, '#t-display')).match(/t = ([\d.]+) s/)[1]);
const tEnd = async (page) => Number((await text(page, '#t-display')).match(/\/ ([\d.]+) s/)[1]);

async function finishedRun(ctx, tmp) {
  const run = makeRun(path.join(tmp, 'done'), 'scenarios/t1_03_time_limit_excludes_a_field.json');
  const url = await view([path.join(tmp, 'done')]);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  const page = await ctx.newPage();
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(url);
  // The folder of runs opens on the table of runs.
  await page.waitForSelector('#runs-table tbody tr');
  assert.match(await text(page, '#runs-table'), /t1_03_time_limit_excludes_a_field/);
  await page.click('#runs-table tbody tr');
  await page.waitForSelector('body[data-painted="run"]');
  // Head.
  const head = await text(page, '#head');
  for (const want of ['t1_03_time_limit_excludes_a_field', 'checked', 'vehicle', 'scripted', 'done', 'success', 'scouted']) assert.ok(head.includes(want), 'head has ' + want + ': ' + head);
  // Scrub: Home, then 1 s steps with the arrow key into the first model call: the model thinks.
  await page.keyboard.press('Home');
  assert.equal(await tNow(page), 0);
  await page.keyboard.press('ArrowRight');
  assert.equal(await tNow(page), 1);
  assert.match(await text(page, '#does'), /The Model Thinks/);
  assert.match(await text(page, '#world-state'), /THE MODEL THINKS/);
  // At t = 4 s the first plan is refused: its counterexample and a picture with its place in red.
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  assert.equal(await tNow(page), 4);
  const does = await text(page, '#does');
  assert.match(does, /REFUSED/);
  assert.match(does, /deadline/);
  assert.match(await text(page, '.counterexample'), /after the deadline/);
  const pic = page.locator('img.verdict-picture');
  await until('the verdict picture', () => pic.evaluate((i) => i.complete && i.naturalWidth === 640));
  const red = await pic.evaluate((img) => {
    const c = document.createElement('canvas'); c.width = img.naturalWidth; c.height = img.naturalHeight;
    const g = c.getContext('2d'); g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 52, c.width, c.height - 52).data; let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] > 200 && d[i + 1] < 40 && d[i + 2] < 40) n++;
    return n;
  });
  assert.ok(red > 30, 'the verdict picture marks a place in red (' + red + ' red pixels)');
  // What the Planner Sees: the wake-up's picture, its message and the reads.
  const sees = await text(page, '#sees');
  assert.match(sees, /wake-up 1 \(start\)/);
  assert.match(sees, /read \{"what":"fields"\}/);
  await until('the wake-up picture', () => page.locator('#sees img.frame').evaluate((i) => i.complete && i.naturalWidth === 640));
  // World: the canvas shows the vehicle (yellow) and the world state.
  const yellow = await page.locator('#world-canvas').evaluate((cv) => {
    const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data; let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] > 240 && d[i + 1] > 195 && d[i + 1] < 235 && d[i + 2] < 60) n++;
    return n;
  });
  assert.ok(yellow > 20, 'the vehicle is drawn (' + yellow + ' yellow pixels)');
  assert.match(await text(page, '#world-state'), /world time 4\.0 s/);
  assert.match(await text(page, '#game-note'), /no packaged game/);
  // Timeline: a click in the middle scrubs there; the vehicle has moved; wake-up keys step.
  const box = await page.locator('#tl-canvas').boundingBox();
  await page.mouse.click(box.x + 90 + (box.width - 100) / 2, box.y + 20);
  const mid = await tNow(page), end = await tEnd(page);
  assert.ok(Math.abs(mid - end / 2) < end * 0.03, 'clicked the middle: ' + mid + ' of ' + end);
  assert.match(await text(page, '#world-state'), /skill (goto|scout|return_home)/);
  await page.keyboard.press('ArrowDown');
  const nextWake = await tNow(page);
  assert.ok(nextWake > mid, 'ArrowDown goes to the next wake-up');
  assert.match(await text(page, '#sees'), /wake-up \d+ \(skill_ended\)/);
  await page.keyboard.press(' ');
  await sleep(600);
  await page.keyboard.press(' ');
  assert.ok((await tNow(page)) > nextWake, 'space plays');
  await page.keyboard.press('End');
  assert.equal(await tNow(page), end);
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, 'viewer-finished.png') });
  // Nothing from a network: every request went to the viewer.
  const origin = new URL(url).origin;
  assert.deepEqual(requests.filter((r) => !r.startsWith(origin) && !r.startsWith('data:')), []);
  // Refusals: ../ (encoded so the URL parser keeps it), absolute paths, symlinks out.
  const rel = path.basename(run);
  for (const bad of ['files/..%2F..%2F..%2Fetc%2Fpasswd', 'files/%2Fetc%2Fpasswd', 'api/run?run=..%2F..%2F..', 'api/run?run=%2Fetc',
    'api/verdict.png?run=..%2F..&i=0', 'files/' + rel + '/..%2F..%2F..%2F..%2Fetc%2Fpasswd']) {
    const r = await page.request.get(url + bad);
    assert.equal(r.status(), 403, bad + ' -> ' + r.status());
    assert.match(await r.text(), /^forbidden: /);
  }
  const r404 = await page.request.get(url + 'files/' + rel + '/frames/f9999.png');
  assert.equal(r404.status(), 404);
  await page.close();
}

/** Pixels of the World canvas within 30 of `rgb` on each channel. */
function countRgb(page, rgb) {
  return page.locator('#world-canvas').evaluate((cv, c) => {
    const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data; let n = 0;
    for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - c[0]) <= 30 && Math.abs(d[i + 1] - c[1]) <= 30 && Math.abs(d[i + 2] - c[2]) <= 30) n++;
    return n;
  }, rgb);
}

async function recordedWorld(ctx, tmp) {
  makeRun(path.join(tmp, 'rec'), 'scenarios/t2_06_truck_on_the_lane.json');
  const url = await view([path.join(tmp, 'rec'), '--world', 'bag']);
  const page = await ctx.newPage();
  await page.goto(url);
  await page.waitForSelector('#runs-table tbody tr');
  await page.click('#runs-table tbody tr');
  await page.waitForSelector('body[data-painted="run"]');
  assert.match(await text(page, '#world-source'), /drawn from run\.jsonl \+ episode\.mcap/);
  // The JSON the page draws from has the recording's objects and returns.
  const first = await page.evaluate(() => {
    const w = S.data.world;
    const r = w.returns.find((x) => x.points.length > 0);
    return { objects: w.objects.length, returns: w.returns.length, t: r ? r.t_s : null };
  });
  assert.ok(first.objects > 10 && first.returns > 10, 'objects and returns in /api/run: ' + JSON.stringify(first));
  assert.ok(first.t !== null, 'some scan has returns');
  // At that time, in the chase view, the canvas draws them: magenta returns, the purple truck.
  await page.selectOption('#world-view', 'chase');
  await page.evaluate((t) => setT(t), first.t);
  const drawn = await page.locator('#world-canvas').evaluate((cv) => [Number(cv.dataset.returns), Number(cv.dataset.objects)]);
  assert.ok(drawn[0] > 0 && drawn[1] > 0, 'returns and objects drawn: ' + drawn);
  const magenta = await countRgb(page, [205, 0, 205]), purple = await countRgb(page, [105, 35, 165]);
  assert.ok(magenta > 5, 'the returns are on the canvas (' + magenta + ' magenta pixels)');
  assert.ok(purple > 20, 'the truck is on the canvas (' + purple + ' purple pixels)');
  assert.match(await text(page, '#world-state'), /objects 1 \(truck\)  LiDAR returns \d+/);
  // Home scrubs back to the start.
  await page.keyboard.press('Home');
  assert.match(await text(page, '#world-state'), /world time 0\.0 s/);
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.evaluate((t) => setT(t), first.t);
  await page.screenshot({ path: path.join(SHOTS, 'viewer-recording.png') });
  await page.close();
}

async function runInProgress(ctx, tmp) {
  const done = makeRun(path.join(tmp, 'src'), 'scenarios/t2_06_truck_on_the_lane.json');
  const lines = fs.readFileSync(path.join(done, 'run.jsonl'), 'utf8').trimEnd().split('\n');
  const live = path.join(tmp, 'live', path.basename(done));
  fs.mkdirSync(live, { recursive: true });
  fs.cpSync(path.join(done, 'frames'), path.join(live, 'frames'), { recursive: true });
  const cut1 = Math.floor(lines.length / 4), cut2 = Math.floor(lines.length / 2);
  fs.writeFileSync(path.join(live, 'run.jsonl'), lines.slice(0, cut1).join('\n') + '\n');
  const url = await view([live, '--follow']);
  const page = await ctx.newPage();
  await page.goto(url);
  await page.waitForSelector('body[data-painted="run"]');
  assert.match(await text(page, '#head'), /running \(no end row yet\)/);
  assert.match(await text(page, '#follow-state'), /following the run/);
  const end1 = await tEnd(page);
  // Rows arrive while the page is open: the page picks them up and stays at the live end.
  fs.appendFileSync(path.join(live, 'run.jsonl'), lines.slice(cut1, cut2).join('\n') + '\n');
  await until('new rows', async () => (await tEnd(page)) > end1);
  assert.equal(await tNow(page), await tEnd(page), 'the page follows the live end');
  // A half-written line is waited for, not an error.
  const rest = lines.slice(cut2).join('\n') + '\n';
  fs.appendFileSync(path.join(live, 'run.jsonl'), rest.slice(0, 40));
  await sleep(1300);
  assert.doesNotMatch(await text(page, '#follow-state'), /error/);
  fs.appendFileSync(path.join(live, 'run.jsonl'), rest.slice(40));
  await until('the end row', async () => /done/.test(await text(page, '#head')));
  assert.match(await text(page, '#head'), /success/);
  assert.equal(await tEnd(page), Number(JSON.parse(lines[lines.length - 1]).t.toFixed(1)));
  await page.screenshot({ path: path.join(SHOTS, 'viewer-follow.png') });
  await page.close();
}

async function sweepBoard(ctx, tmp) {
  // Two planners (scripted in text mode, classical) × two scenarios × two repeats.
  const spec = path.join(tmp, 'sweep.toml');
  const sc = ['t1_01_one_field', 't2_06_truck_on_the_lane'].map((s) => JSON.stringify(path.join(ROOT, 'scenarios', s + '.json')));
  fs.writeFileSync(spec, 'scenarios = [' + sc.join(', ') + ']\nmodels = ["scripted"]\nmodes = ["text", "classical"]\n' +
    'repeats = 2\nrecord = "none"\nworkers = 2\n');
  const out = path.join(tmp, 'sweep');
  execFileSync(EXE, ['sweep', spec, '--out', out, '--quiet'], { cwd: ROOT, stdio: 'inherit' });
  const url = await view([out]);
  const page = await ctx.newPage();
  await page.goto(url);
  await page.waitForSelector('body[data-board]');
  // The leaderboard: a line per group, sorted by planner.
  const groups = await page.locator('#board-table tbody tr').allInnerTexts();
  assert.equal(groups.length, 2);
  assert.match(groups[0], /^classical\/none\/classical\/vehicle\s+4\s+0\s+\d\/4/);
  assert.match(groups[1], /^scripted\/scripted\/text\/vehicle\s+4\s+0\s+\d\/4/);
  // The matrix: a cell per group and scenario, successes of the repeats, coloured by rate.
  const cells = page.locator('#matrix td.cell');
  assert.equal(await cells.count(), 4);
  for (const t of await cells.allInnerTexts()) assert.match(t, /^[0-2]\/2$/);
  const bg = await cells.first().evaluate((td) => [td.dataset.rate, getComputedStyle(td).backgroundColor]);
  assert.notEqual(bg[1], 'rgba(0, 0, 0, 0)', 'the cell is coloured');
  // A click lists the cell's runs; a run opens.
  await cells.first().click();
  const links = page.locator('#cell-runs a');
  assert.equal(await links.count(), 2);
  assert.match(await links.first().innerText(), /^none\/classical\/vehicle\/t1_01_one_field\/1\//);
  await links.first().click();
  await page.waitForSelector('body[data-painted="run"]');
  assert.match(await text(page, '#head'), /t1_01_one_field/);
  await page.goBack();
  await page.waitForSelector('#board-chart svg polyline', { state: 'attached' });
  // The chart, and the comparison of the first two groups, paired by scenario and seed.
  assert.equal(await page.locator('body').getAttribute('data-board'),
    'classical/none/classical/vehicle vs scripted/scripted/text/vehicle');
  const cmp = await text(page, '#comparison');
  assert.match(cmp, /pairs\s+4\n/);
  assert.match(cmp, /McNemar exact p\s+[01]\.\d{4}/);
  assert.match(cmp, /bootstrap 95 % \(10000 resamples, seed 0\)\s+\[[-+]\d\.\d{3}, [-+]\d\.\d{3}\]/);
  // Choosing A and B asks again.
  await page.selectOption('#cmp-a', 'scripted/scripted/text/vehicle');
  await page.selectOption('#cmp-b', 'classical/none/classical/vehicle');
  await until('the swapped comparison', async () => (await page.locator('body').getAttribute('data-board')) ===
    'scripted/scripted/text/vehicle vs classical/none/classical/vehicle');
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, 'viewer-board.png'), fullPage: true });
  await page.close();
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'acres-browser-'));
const { ctx, profile } = await browser();
try {
  await finishedRun(ctx, tmp);
  console.log('ok: finished run (head, world, sees, does, timeline, scrub, keys, refusals)');
  await recordedWorld(ctx, tmp);
  console.log('ok: the recording\'s objects and LiDAR returns in the World (--world bag)');
  await runInProgress(ctx, tmp);
  console.log('ok: run in progress (--follow)');
  await sweepBoard(ctx, tmp);
  console.log('ok: a sweep folder\'s leaderboard, matrix, chart and comparison');
  console.log('screenshots in ' + SHOTS);
} finally {
  await ctx.close();
  cleanup();
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.rmSync(profile, { recursive: true, force: true });
}
