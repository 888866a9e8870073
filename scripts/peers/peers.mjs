// The browser peer: speedscope in headless Chromium against scorch, on the same files, in
// one run. Prints one markdown table (and writes it to $WORK/peers.md).
//
//   scripts/peers.sh                               # all formats, 10M 100M 375M 1G
//   SIZES="10M 100M" FORMATS="folded chrome" scripts/peers.sh
//
// Environment:
//   SIZES     input sizes, decimal (10M = 10^7 bytes) (default "10M 100M 375M 1G")
//   FORMATS   any of folded perf chrome cpuprofile (default all four)
//   SEED      generator seed (default 7)
//   WORK      scratch folder; generated inputs are kept there (default /tmp/scorch-peers)
//   TIMEOUT   seconds per run and side before it counts as failed (default 300)
//   SCORCH    the scorch binary (default target/release/scorch)
//   CHROMIUM  the browser (default /usr/bin/chromium)
//   SIDES     which runs: any of speedscope window render (default all three)
//   SHOTS     set: a screenshot of speedscope's page, 1 s after the flame graph was
//             drawn, in WORK/speedscope-NAME.png (after the measurement)
//
// Inputs: folded `scorch gen w1 --seed SEED --size S`, perf script `scorch gen w1 --format
// perf`, Chrome trace JSON `scorch gen w6` (X and B/E events) and a V8 `.cpuprofile`
// written by this script (cpuprofile.mjs: a node tree in depth-first order, samples and
// timeDeltas, deterministic from SEED).
//
// What is measured, one run per (format, size) and side, the sides in turn:
// - speedscope (the npm package's built page, served from 127.0.0.1 by this script with
//   the file, opened with `index.html#profileURL=/files/NAME`) in Chromium started by
//   Playwright with a fresh profile folder. Time: from the navigation's start
//   (performance.timeOrigin: the moment the page is opened) to the first drawn flame
//   graph, defined as: the animation frame after the first one in which, after
//   speedscope's post-import title change ("NAME - speedscope"), one of its 2D overlay
//   canvases (the flame chart's labels, drawn in the same frame as its WebGL
//   rectangles) holds a non-transparent pixel; polled in the page on every animation
//   frame. Memory: the peak resident memory of Chromium's whole process tree (browser,
//   GPU, renderer, utility processes): anonymous + shared-memory pages summed over the
//   processes, file-backed pages (executable, libraries) counted once, from
//   /proc/PID/status every 50 ms, from launch until 1 s after the flame graph is drawn.
// - scorch window (`scorch FILE --size 1200x800` under Xvfb): its log's "preview on
//   screen" (first picture; files too small for a preview have none, then the first
//   picture is the whole file) and "whole file on screen" lines, in ms after launch (the
//   App's clock, started before the window and the GPU device). Memory: the peak resident
//   memory of the process, sampled the same way, until 1 s after the whole file is on
//   screen.
// - scorch render (`scorch render FILE -o out.png --width 1200 --height 800`): the whole
//   process's wall time and peak RSS (`/usr/bin/time -v`).
// Ratios: speedscope's time / scorch's (> 1: scorch is faster), speedscope's peak memory
// / scorch window's. A run that fails (out of memory, renderer crash "Aw, Snap",
// speedscope's import error or alert, a timeout, scorch exiting with an error) is
// reported in the "failed" column, not as an error of this script.

import { chromium } from 'playwright-core';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeCpuprofile } from './cpuprofile.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const env = process.env;
const SIZES = (env.SIZES || '10M 100M 375M 1G').split(/\s+/).filter(Boolean);
const FORMATS = (env.FORMATS || 'folded perf chrome cpuprofile').split(/\s+/).filter(Boolean);
const SIDES = new Set((env.SIDES || 'speedscope window render').split(/\s+/).filter(Boolean));
const SEED = env.SEED || '7';
const WORK = env.WORK || '/tmp/scorch-peers';
const TIMEOUT_MS = Number(env.TIMEOUT || 300) * 1000;
const SCORCH = env.SCORCH || path.join(ROOT, 'target', 'release', 'scorch');
const CHROMIUM = env.CHROMIUM || '/usr/bin/chromium';
const VIEW = { width: 1200, height: 800 };
const SPEEDSCOPE_DIR = path.join(HERE, 'node_modules', 'speedscope', 'dist', 'release');
// Chromium's flags (Playwright adds its own automation flags and the profile folder).
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const FORMAT_SPECS = {
  folded: { label: 'folded', ext: 'folded', gen: ['w1', '--format', 'folded'] },
  perf: { label: 'perf script', ext: 'perf.txt', gen: ['w1', '--format', 'perf'] },
  chrome: { label: 'Chrome trace JSON', ext: 'json', gen: ['w6', '--format', 'chrome'] },
  cpuprofile: { label: '.cpuprofile', ext: 'cpuprofile', gen: null },
};

const log = (...a) => console.error('peers:', ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function parseSize(s) {
  const m = /^([0-9.]+)\s*([KMGT]?)B?$/i.exec(s.trim());
  if (!m) throw new Error(`not a size: ${s}`);
  const mult = { '': 1, K: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2].toUpperCase()];
  return Math.round(Number(m[1]) * mult);
}

// ---------------------------------------------------------------- memory sampling

/** pid -> ppid of every process. */
function processTable() {
  const parent = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: split after the last ')'.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(d), Number(rest[1]));
    } catch {
      // Gone since the directory was read.
    }
  }
  return parent;
}

function descendants(roots, parent) {
  const children = new Map();
  for (const [pid, ppid] of parent) {
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const out = [];
  const todo = [...roots];
  while (todo.length) {
    const p = todo.pop();
    out.push(p);
    todo.push(...(children.get(p) || []));
  }
  return out;
}

/** A process's resident memory from /proc/PID/status, KiB: { anon, file, shmem } (null when gone). */
function residentKib(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0);
    return { anon: kib('RssAnon'), file: kib('RssFile'), shmem: kib('RssShmem') };
  } catch {
    return null;
  }
}

/**
 * Samples, every 50 ms, the resident memory of the process trees `roots()` returns
 * (rescanned every 500 ms): the anonymous and shared-memory pages summed over the
 * processes, plus the file-backed pages of the process with the most (the executable
 * and libraries, mapped by every process of a tree, counted once). Reads only
 * /proc/PID/status, whose counters cost nothing to read; /proc/PID/smaps_rollup (PSS)
 * walks the page tables and took 35–90 ms per read of a big renderer, a core's worth
 * at this rate. `stop()` gives the peak in KiB.
 */
function memorySampler(roots) {
  let peak = 0;
  let running = true;
  let pids = [];
  let scanned = 0;
  const tick = () => {
    if (!running) return;
    if (Date.now() - scanned >= 500) {
      const r = roots();
      pids = r.length ? descendants(r, processTable()) : [];
      scanned = Date.now();
    }
    let own = 0;
    let file = 0;
    for (const p of pids) {
      const m = residentKib(p);
      if (!m) continue;
      own += m.anon + m.shmem;
      file = Math.max(file, m.file);
    }
    peak = Math.max(peak, own + file);
    timer = setTimeout(tick, 50);
  };
  let timer = setTimeout(tick, 0);
  return {
    stop() {
      running = false;
      clearTimeout(timer);
      return peak;
    },
  };
}

/** The direct children of this process whose command name is `name`. */
function childrenNamed(name) {
  const out = [];
  for (const [pid, ppid] of processTable()) {
    if (ppid !== process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name) out.push(pid);
    } catch {
      // Gone.
    }
  }
  return out;
}

// ---------------------------------------------------------------- inputs

function runChecked(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})`);
}

async function input(format, size) {
  const spec = FORMAT_SPECS[format];
  const name = `${format}-${size}-s${SEED}.${spec.ext}`;
  const file = path.join(WORK, name);
  if (fs.existsSync(file) && fs.statSync(file).size > 0) return { file, name };
  const tmp = `${file}.partial`;
  log(`writing ${file}`);
  if (spec.gen) {
    runChecked(SCORCH, ['gen', ...spec.gen, '--seed', SEED, '--size', size, '-o', tmp]);
  } else {
    writeCpuprofile(tmp, parseSize(size), Number(SEED));
  }
  fs.renameSync(tmp, file);
  return { file, name };
}

// ---------------------------------------------------------------- speedscope

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain',
};

/** Serves speedscope's page at / and WORK's files at /files/NAME, on 127.0.0.1. */
function serve() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    let file;
    if (url.pathname.startsWith('/files/')) {
      file = path.join(WORK, path.basename(decodeURIComponent(url.pathname.slice(7))));
    } else {
      const rel = url.pathname === '/' ? 'index.html' : path.basename(url.pathname);
      file = path.join(SPEEDSCOPE_DIR, rel);
    }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, {
        'Content-Type': MIME[path.extname(file)] || 'application/octet-stream',
        'Content-Length': st.size,
        'Cache-Control': 'no-store',
      });
      fs.createReadStream(file).pipe(res);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// Runs in the page before speedscope: records which canvases got a 2D context (only those
// are read back, so no context is ever created here), then on every animation frame
// checks for the title speedscope sets after an import and, after it, for painted
// pixels in a 2D canvas. Reports through the `__peerReport` binding.
const PAGE_PROBE = () => {
  const canvases2d = new Set();
  const getContext = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (kind, ...rest) {
    const ctx = getContext.call(this, kind, ...rest);
    if (ctx && kind === '2d') canvases2d.add(this);
    return ctx;
  };
  let imported = null;
  let painted = null;
  const painted2d = () => {
    for (const c of canvases2d) {
      if (!c.isConnected || c.width === 0 || c.height === 0) continue;
      const data = getContext.call(c, '2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return true;
    }
    return false;
  };
  const frame = () => {
    const now = performance.now();
    if (imported === null && document.title.endsWith(' - speedscope')) {
      imported = now;
      window.__peerReport({ kind: 'imported', ms: now });
    }
    if (imported !== null && painted === null && painted2d()) {
      painted = now;
    } else if (painted !== null) {
      window.__peerReport({ kind: 'drawn', ms: now, painted });
      return;
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
};

async function runSpeedscope(server, name) {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'scorch-peers-chromium-'));
  const port = server.address().port;
  const result = { ms: null, importMs: null, peakKib: null, failed: null };
  let context = null;
  let sampler = null;
  let settle;
  const done = new Promise((r) => (settle = r));
  const notes = [];
  try {
    context = await chromium.launchPersistentContext(userDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: VIEW,
      timeout: 60000,
    });
    sampler = memorySampler(() => childrenNamed('chromium'));
    const page = context.pages()[0] || (await context.newPage());
    await page.exposeBinding('__peerReport', (_src, msg) => {
      if (msg.kind === 'imported') result.importMs = msg.ms;
      if (msg.kind === 'drawn') settle({ drawn: msg.ms });
    });
    await page.addInitScript(PAGE_PROBE);
    page.on('crash', () => settle({ failed: 'renderer crashed ("Aw, Snap")' }));
    page.on('dialog', (d) => {
      settle({ failed: `alert: ${d.message()}` });
      d.dismiss().catch(() => {});
    });
    page.on('pageerror', (e) => notes.push(String(e.message || e).slice(0, 120)));
    page.on('console', (m) => {
      const t = m.text();
      if (/Failed to load format/.test(t)) {
        // speedscope then shows "Something went wrong"; the console holds the cause.
        settle({ failed: `import failed: ${t.slice(0, 160)}` });
      } else if (m.type() === 'error') {
        notes.push(t.slice(0, 120));
      }
    });
    context.on('close', () => settle({ failed: 'browser exited' }));
    const timer = setTimeout(
      () => settle({ failed: `timeout after ${TIMEOUT_MS / 1000} s` }),
      TIMEOUT_MS,
    );
    const url = `http://127.0.0.1:${port}/index.html#profileURL=${encodeURIComponent(`/files/${name}`)}`;
    page.goto(url, { timeout: TIMEOUT_MS }).catch((e) => notes.push(`goto: ${e.message.split('\n')[0]}`));
    const end = await done;
    clearTimeout(timer);
    if (end.drawn !== undefined) {
      result.ms = end.drawn;
      await sleep(1000);
      if (env.SHOTS) await page.screenshot({ path: path.join(WORK, `speedscope-${name}.png`) });
    } else {
      result.failed = end.failed;
      if (result.importMs !== null) result.failed += ` (imported at ${fmtS(result.importMs)} s)`;
      const cause = notes.find((n) => /memory|allocation|Invalid string length|RangeError/i.test(n));
      if (cause) result.failed += `: ${cause}`;
    }
  } catch (e) {
    result.failed = `harness: ${String(e.message || e).split('\n')[0]}`;
  } finally {
    if (sampler) result.peakKib = sampler.stop();
    if (context) await context.close().catch(() => {});
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  return result;
}

// ---------------------------------------------------------------- scorch

/** Xvfb on a free display number; resolves to { display, proc }. */
function startXvfb() {
  return new Promise((resolve, reject) => {
    const proc = spawn('Xvfb', ['-displayfd', '1', '-screen', '0', '1400x900x24', '-nolisten', 'tcp'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve({ display: `:${out.trim()}`, proc });
    });
    proc.on('error', reject);
    proc.on('exit', (c) => reject(new Error(`Xvfb exited (${c})`)));
  });
}

function stopProcess(proc) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const kill = setTimeout(() => proc.kill('SIGKILL'), 3000);
    proc.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

async function runWindow(display, file) {
  const logFile = path.join(WORK, 'window.log');
  const fd = fs.openSync(logFile, 'w');
  const xdg = path.join(WORK, 'xdg');
  fs.mkdirSync(xdg, { recursive: true, mode: 0o700 });
  const proc = spawn(SCORCH, [file, '--size', `${VIEW.width}x${VIEW.height}`], {
    stdio: ['ignore', 'ignore', fd],
    env: { ...env, DISPLAY: display, XDG_RUNTIME_DIR: xdg },
  });
  fs.closeSync(fd);
  const sampler = memorySampler(() => (proc.exitCode === null ? [proc.pid] : []));
  const result = { firstMs: null, wholeMs: null, peakKib: null, failed: null, adapter: null };
  const started = Date.now();
  const onScreen = (what, text) => {
    const m = new RegExp(`scorch: ${what} on screen \\d+ ms after the load started \\((\\d+) ms after launch\\)`).exec(text);
    return m ? Number(m[1]) : null;
  };
  for (;;) {
    const text = fs.readFileSync(logFile, 'utf8');
    const preview = onScreen('preview', text);
    const whole = onScreen('whole file', text);
    result.adapter ??= /scorch: drawing with (.*)/.exec(text)?.[1] ?? null;
    if (whole !== null) {
      result.wholeMs = whole;
      result.firstMs = preview ?? whole;
      await sleep(1000);
      break;
    }
    if (proc.exitCode !== null || proc.signalCode !== null) {
      const last = text.trim().split('\n').filter((l) => !/on screen|laid out|uploaded|drawing with/.test(l)).pop();
      result.failed = `window exited (${proc.exitCode ?? proc.signalCode})${last ? `: ${last.slice(0, 160)}` : ''}`;
      break;
    }
    if (Date.now() - started > TIMEOUT_MS) {
      result.failed = `window: timeout after ${TIMEOUT_MS / 1000} s`;
      if (preview !== null) result.firstMs = preview;
      break;
    }
    await sleep(50);
  }
  result.peakKib = sampler.stop();
  await stopProcess(proc);
  return result;
}

async function runRender(file) {
  const png = path.join(WORK, 'render.png');
  const timeLog = path.join(WORK, 'render.time');
  const result = { ms: null, rssKib: null, failed: null };
  const t0 = process.hrtime.bigint();
  const proc = spawn(
    '/usr/bin/time',
    ['-v', '-o', timeLog, SCORCH, 'render', file, '-o', png, '--width', String(VIEW.width), '--height', String(VIEW.height)],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => proc.kill('SIGKILL'), TIMEOUT_MS);
  const code = await new Promise((r) => proc.on('exit', (c, s) => r(c ?? s)));
  clearTimeout(timer);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const timeText = fs.existsSync(timeLog) ? fs.readFileSync(timeLog, 'utf8') : '';
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(timeText);
  if (code === 0) {
    result.ms = ms;
    result.rssKib = rss ? Number(rss[1]) : null;
  } else {
    const last = stderr.trim().split('\n').pop() || '';
    result.failed =
      ms >= TIMEOUT_MS ? `render: timeout after ${TIMEOUT_MS / 1000} s` : `render exited (${code})${last ? `: ${last.slice(0, 160)}` : ''}`;
  }
  return result;
}

// ---------------------------------------------------------------- table

const fmtS = (ms) => (ms === null || ms === undefined ? '—' : (ms / 1000).toFixed(2));
const fmtMiB = (kib) => (kib === null || kib === undefined || kib === 0 ? '—' : (kib / 1024).toFixed(0));
const ratio = (a, b) => (a === null || b === null || a === undefined || b === undefined || b === 0 ? '—' : `${(a / b).toFixed(2)}×`);

function table(rows) {
  const head = [
    'format',
    'size',
    'speedscope first flame graph (s)',
    'speedscope peak memory (MiB)',
    'scorch window first picture (s)',
    'scorch window whole picture (s)',
    'scorch window peak memory (MiB)',
    'scorch render (s)',
    'scorch render peak RSS (MiB)',
    'speedscope ÷ first picture',
    'speedscope ÷ whole picture',
    'speedscope ÷ render',
    'speedscope ÷ window memory',
    'failed',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i < 2 || i === head.length - 1 ? '---' : '--:')).join('|')}|`];
  for (const r of rows) {
    const s = r.speedscope || {};
    const w = r.window || {};
    const d = r.render || {};
    const failed = [
      s.failed && `speedscope: ${s.failed}`,
      w.failed && `scorch window: ${w.failed}`,
      d.failed && `scorch render: ${d.failed}`,
    ].filter(Boolean);
    lines.push(
      `| ${[
        r.label,
        r.size,
        fmtS(s.ms),
        // A failed run's peak is what it had reached when it failed: a lower bound.
        s.failed && s.peakKib ? `≥ ${fmtMiB(s.peakKib)}` : fmtMiB(s.peakKib),
        fmtS(w.firstMs),
        fmtS(w.wholeMs),
        fmtMiB(w.peakKib),
        fmtS(d.ms),
        fmtMiB(d.rssKib),
        ratio(s.ms, w.firstMs),
        ratio(s.ms, w.wholeMs),
        ratio(s.ms, d.ms),
        s.failed || w.failed ? '—' : ratio(s.peakKib, w.peakKib),
        failed.length ? failed.join('; ').replaceAll('|', '/') : 'none',
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- main

async function main() {
  for (const f of FORMATS) if (!FORMAT_SPECS[f]) throw new Error(`unknown format ${f} (folded perf chrome cpuprofile)`);
  for (const s of SIZES) parseSize(s);
  if (!fs.existsSync(SCORCH)) throw new Error(`${SCORCH} not found: cargo build --release`);
  if (SIDES.has('speedscope') && !fs.existsSync(path.join(SPEEDSCOPE_DIR, 'index.html'))) {
    throw new Error(`${SPEEDSCOPE_DIR}/index.html not found: npm ci in ${HERE}`);
  }
  fs.mkdirSync(WORK, { recursive: true });
  const server = SIDES.has('speedscope') ? await serve() : null;
  const xvfb = SIDES.has('window') ? await startXvfb() : null;
  const rows = [];
  let adapter = null;
  try {
    for (const size of SIZES) {
      for (const format of FORMATS) {
        const row = { label: FORMAT_SPECS[format].label, size };
        rows.push(row);
        let f;
        try {
          f = await input(format, size);
        } catch (e) {
          row.speedscope = { failed: `input: ${e.message}` };
          continue;
        }
        if (server) {
          log(`${format} ${size}: speedscope`);
          row.speedscope = await runSpeedscope(server, f.name);
          log(`  ${JSON.stringify(row.speedscope)}`);
        }
        if (xvfb) {
          log(`${format} ${size}: scorch window`);
          row.window = await runWindow(xvfb.display, f.file);
          adapter ??= row.window.adapter;
          log(`  ${JSON.stringify(row.window)}`);
        }
        if (SIDES.has('render')) {
          log(`${format} ${size}: scorch render`);
          row.render = await runRender(f.file);
          log(`  ${JSON.stringify(row.render)}`);
        }
      }
    }
  } finally {
    if (server) server.close();
    if (xvfb) await stopProcess(xvfb.proc);
  }
  const version = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const speedscopeVersion = JSON.parse(
    fs.readFileSync(path.join(HERE, 'node_modules', 'speedscope', 'package.json'), 'utf8'),
  ).version;
  const out = [
    table(rows),
    '',
    `speedscope ${speedscopeVersion} in ${version} (headless, ${CHROMIUM_ARGS.slice(1).join(' ')}); ` +
      `scorch window drawing with ${adapter ?? 'unknown'}; ${os.cpus().length} CPUs, ` +
      `${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end.`,
  ].join('\n');
  fs.writeFileSync(path.join(WORK, 'peers.md'), `${out}\n`);
  console.log(out);
}

main().catch((e) => {
  console.error(`peers: ${e.stack || e}`);
  process.exit(1);
});
