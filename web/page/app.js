// The playground page: editor, options, Run / Explain through the worker, the URL as a link.
import { highlightLine, splitAtSpan } from './highlight.js';
import { parseColumns, siteRange } from './columns.js';
import { GraphView } from './graph-view.js';

const $ = (id) => document.getElementById(id);
const source = $('source');
const highlight = $('highlight');
const gutter = $('gutter');
const FILE = 'playground.litmus';

/** What the page shows, for the browser tests to read (window.ptxmmPlayground). */
const state = { ready: false, info: null, busy: false, last: null, firstVerdictMs: null, diagnostic: null, selected: null, runText: null };
window.ptxmmPlayground = state;

// ---------------------------------------------------------------- the worker

let worker = null;
let nextId = 1;
const pending = new Map();
let readyResolve;
let ready = new Promise((r) => (readyResolve = r));

function startWorker() {
  worker = new Worker(new URL('worker.js', import.meta.url), { type: 'module' });
  worker.onmessage = ({ data }) => {
    if ('ready' in data) {
      if (!data.ready) return setStatus(data.error, 'error');
      state.ready = true;
      state.info = data.info;
      readyResolve(data.info);
      return;
    }
    const p = pending.get(data.id);
    pending.delete(data.id);
    if (p) data.error ? p.reject(new Error(data.error)) : p.resolve(data.answer);
  };
  worker.onerror = (e) => setStatus(`the worker failed: ${e.message}`, 'error');
}

function ask(request) {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, request });
  });
}

/** Stop: the search cannot be interrupted from outside, so the worker is replaced. */
function stop() {
  worker.terminate();
  for (const p of pending.values()) p.reject(new Error('stopped'));
  pending.clear();
  state.ready = false;
  ready = new Promise((r) => (readyResolve = r));
  startWorker();
}

// ---------------------------------------------------------------- status line

let timer = null;
function setStatus(text, kind = '') {
  $('status-text').textContent = text;
  $('status').className = kind;
}
function busy(what) {
  state.busy = true;
  const started = performance.now();
  document.querySelector('.spinner').hidden = false;
  $('run').disabled = $('explain').disabled = true;
  $('stop').disabled = false;
  const tick = () => setStatus(`${what}… ${((performance.now() - started) / 1000).toFixed(1)} s`);
  tick();
  timer = setInterval(tick, 100);
  return started;
}
function idle(text, kind) {
  state.busy = false;
  clearInterval(timer);
  document.querySelector('.spinner').hidden = true;
  $('run').disabled = $('explain').disabled = false;
  $('stop').disabled = true;
  setStatus(text, kind);
}

// ---------------------------------------------------------------- editor

function render() {
  const lines = source.value.split('\n');
  const d = state.diagnostic;
  let open = null;
  const html = lines.map((line, i) => {
    let segments;
    ({ segments, open } = highlightLine(line, open));
    const n = i + 1;
    if (d && n >= d.line && n <= d.endLine) {
      const from = n === d.line ? d.column - 1 : 0;
      const to = n === d.endLine ? Math.max(d.endColumn - 1, from + 1) : line.length;
      return `<span class="error-line">${splitAtSpan(segments, from, to)}</span>`;
    }
    return splitAtSpan(segments, -1, -1);
  });
  // A trailing newline keeps the last line's height when the text ends with one.
  highlight.innerHTML = html.join('\n') + '\n';
  // Spare lines at the end, so the numbers scroll as far as the text (its scrollbar included).
  gutter.textContent = lines.map((_, i) => i + 1).join('\n') + '\n\n\n';
  renderColumns();
  syncScroll();
}
function syncScroll() {
  highlight.scrollTop = source.scrollTop;
  highlight.scrollLeft = source.scrollLeft;
  gutter.scrollTop = source.scrollTop;
}

/** The Thread columns view: the code as a table, one column per thread, cells wrapped. */
function renderColumns() {
  const box = $('columns');
  box.hidden = !$('show-columns').checked;
  if (box.hidden) return;
  const table = parseColumns(source.value);
  if (!table) {
    box.innerHTML = '<p class="tip">No thread header (<code>P0@cta 0,gpu 0 | P1… ;</code>) found.</p>';
    return;
  }
  const head = `<tr><th class="ln">line</th>${table.threads.map((t) => `<th>${t}</th>`).join('')}</tr>`;
  const rows = table.rows
    .map(
      (r) =>
        `<tr><th class="ln">${r.line}</th>` +
        table.threads
          .map((t, k) => `<td data-thread="${t}" data-line="${r.line}">${escapeHtml((r.cells[k] || { text: '' }).text.trim())}</td>`)
          .join('') +
        '</tr>',
    )
    .join('');
  box.innerHTML = `<table>${head}${rows}</table>`;
}
$('show-columns').addEventListener('change', renderColumns);
$('columns').addEventListener('click', (e) => {
  const cell = e.target.closest('td[data-line]');
  if (cell) selectSite(cell.dataset.thread, Number(cell.dataset.line));
});

/** Width of one character of the editor's monospace font, in pixels. */
function charWidth() {
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = getComputedStyle(source).font;
  return ctx.measureText('0'.repeat(40)).width / 40 || 8;
}

/** Select `thread`'s instruction on `line` in the editor (the whole line if it has no such cell),
 *  scroll it into view, and mark it in the Thread columns view. */
function selectSite(thread, line) {
  const range = siteRange(source.value, thread, line);
  if (!range) return;
  source.focus({ preventScroll: true });
  source.setSelectionRange(range.start, range.end);
  const lineHeight = parseFloat(getComputedStyle(source).lineHeight) || 18;
  source.scrollTop = Math.max(0, (line - 1) * lineHeight - source.clientHeight / 3);
  const x = range.column * charWidth();
  if (x < source.scrollLeft || x > source.scrollLeft + source.clientWidth - 80) source.scrollLeft = Math.max(0, x - 40);
  syncScroll();
  state.selected = { thread, line, text: source.value.slice(range.start, range.end) };
  for (const c of document.querySelectorAll('#columns td.current')) c.classList.remove('current');
  const cell = document.querySelector(`#columns td[data-thread="${thread}"][data-line="${line}"]`);
  if (cell) {
    cell.classList.add('current');
    cell.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }
  $('editor').scrollIntoView({ block: 'nearest' });
}
// Findings and explanations cite "P1 line 15": each citation is a link to that instruction.
document.addEventListener('click', (e) => {
  const link = e.target.closest('a.line-link');
  if (!link) return;
  e.preventDefault();
  selectSite(link.dataset.thread, Number(link.dataset.line));
});
source.addEventListener('input', () => {
  $('examples').value = '';
  state.diagnostic = null;
  $('diagnostics').hidden = true;
  render();
  scheduleUrlUpdate();
});
source.addEventListener('scroll', syncScroll);
source.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    runTest();
  } else if (e.key === 'Tab' && !e.shiftKey) {
    e.preventDefault();
    document.execCommand('insertText', false, '  ');
  }
});

function setSource(text) {
  source.value = text;
  state.diagnostic = null;
  $('diagnostics').hidden = true;
  // A test wider than the editor opens in the Thread columns view too (the box turns it off).
  const widest = Math.max(...text.split('\n').map((l) => l.length));
  const table = parseColumns(text);
  $('show-columns').checked = !!table && table.threads.length > 1 && widest * charWidth() > source.clientWidth;
  render();
}

// ---------------------------------------------------------------- options

function options() {
  const readings = [...document.querySelectorAll('#readings input:checked')].map((c) => c.value);
  return { model: $('model').value, readings, timeout: Number($('timeout').value) || 0 };
}

function fillOptions(info) {
  $('model').innerHTML = info.models
    .map((m) => `<option value="${m.name}"${m.name === info.default_model ? ' selected' : ''}>${m.name}</option>`)
    .join('');
  $('readings').innerHTML = info.readings
    .map(
      (r) =>
        `<label title="default: ${escapeHtml(r.default)}"><input type="checkbox" value="${r.flag}"> ` +
        `<b>${r.flag}</b> (${r.id}): ${escapeHtml(r.alternative)}</label>`,
    )
    .join('');
  const groups = { classic: 'Classics', async: 'tests/async' };
  $('examples').innerHTML =
    '<option value="">(choose a test)</option>' +
    Object.entries(groups)
      .map(
        ([g, label]) =>
          `<optgroup label="${label}">` +
          info.examples
            .filter((e) => e.group === g)
            .map((e) => `<option value="${e.path}">${e.path.split('/').pop().replace(/\.litmus$/, '')}</option>`)
            .join('') +
          '</optgroup>',
      )
      .join('');
  $('readings').addEventListener('change', () => {
    const n = options().readings.length;
    $('readings-count').textContent = n ? `${n} alternative${n > 1 ? 's' : ''}` : 'defaults';
    scheduleUrlUpdate();
  });
  $('model').addEventListener('change', scheduleUrlUpdate);
}

function applyOptions({ model, readings }) {
  if (model) $('model').value = model;
  for (const c of document.querySelectorAll('#readings input')) c.checked = readings.includes(c.value);
  $('readings').dispatchEvent(new Event('change'));
}

// ---------------------------------------------------------------- the URL

const b64url = {
  encode: (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
  decode: (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)),
};
async function pipe(bytes, stream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}
/** The hash that reproduces the page: the test (deflated, base64url), the model, the readings. */
async function encodeHash() {
  const deflated = await pipe(new TextEncoder().encode(source.value), new CompressionStream('deflate-raw'));
  const o = options();
  const params = new URLSearchParams({ code: b64url.encode(deflated), model: o.model });
  if (o.readings.length) params.set('readings', o.readings.join(','));
  return `#${params}`;
}
async function decodeHash(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const result = { model: params.get('model'), readings: (params.get('readings') || '').split(',').filter(Boolean) };
  if (params.has('code')) {
    const bytes = await pipe(b64url.decode(params.get('code')), new DecompressionStream('deflate-raw'));
    result.text = new TextDecoder().decode(bytes);
  } else if (params.has('example')) {
    result.example = params.get('example');
  }
  return result;
}
let urlTimer = null;
function scheduleUrlUpdate() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(async () => history.replaceState(null, '', await encodeHash()), 300);
}

// ---------------------------------------------------------------- Run and Explain

function escapeHtml(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

/** The CLI's output with its structure marked: the verdict, rule names, hints; every "P1 line 15"
 *  a link to that instruction. */
function markOutput(text) {
  return escapeHtml(text)
    .split('\n')
    .map((l) => {
      l = l.replace(/\b(P\d+) line (\d+)\b/g, '<a href="#" class="line-link" data-thread="$1" data-line="$2">$1 line $2</a>');
      if (/^Verdict: /.test(l)) return `<b class="verdict-line">${l}</b>`;
      if (/^\s+hint: /.test(l)) return `<span class="hint">${l}</span>`;
      if (/^Liveness: may hang/.test(l)) return `<span class="hang">${l}</span>`;
      return l.replace(/^(\s*-?\s*)\[([\w.-]+)\]/, '$1<span class="rule">[$2]</span>');
    })
    .join('\n');
}

/** A run's answer in the order a reader needs it: the verdict line, the findings with their
 *  hints, the notes and liveness, then herd7's block folded (open when there are no findings, as
 *  then it is the answer). The text is the CLI's, cut at the boundaries of its sections. */
function showRun(answer) {
  const parts = answer.sections;
  const stderr = answer.stderr.length ? `<pre class="stderr">${escapeHtml(answer.stderr.join('\n'))}</pre>` : '';
  if (!parts) {
    $('output').innerHTML = `${stderr}<pre>${markOutput(answer.text)}</pre>`;
    return;
  }
  const block = (cls, text) => (text ? `<pre class="${cls}">${markOutput(text.replace(/\n$/, ''))}</pre>` : '');
  const herdTitle = (parts.herd.match(/^States (\d+)/m) || [])[1];
  $('output').innerHTML =
    stderr +
    block('headline', parts.headline) +
    block('findings', parts.findings) +
    block('notes', parts.notes) +
    block('liveness', parts.liveness) +
    `<details id="herd"${parts.findings ? '' : ' open'}><summary>herd7's block` +
    (herdTitle ? ` (${herdTitle} state${herdTitle === '1' ? '' : 's'})` : '') +
    `</summary>${block('herd', parts.herd)}</details>`;
}

function showDiagnostic(answer) {
  const e = answer.error;
  $('diagnostics').hidden = false;
  $('diagnostics').textContent = e.rendered || e.message;
  if (e.line) {
    state.diagnostic = { line: e.line, column: e.column, endLine: answer.end_line || e.line, endColumn: answer.end_column || e.column + 1 };
    render();
    // Bring the marked line into view.
    const lineHeight = parseFloat(getComputedStyle(source).lineHeight) || 18;
    source.scrollTop = Math.max(0, (e.line - 3) * lineHeight);
    syncScroll();
  }
}

function showVerdict(verdict, liveness) {
  const v = $('verdict');
  v.hidden = false;
  v.className = `verdict-${(verdict || 'none').toLowerCase()}`;
  v.textContent = verdict ? `Verdict: ${verdict}` : 'No verdict (liveness only)';
  const hang = liveness && liveness.status === 'may_hang';
  $('summary').innerHTML = liveness
    ? `<span class="${hang ? 'hang' : 'live-ok'}">Liveness: ${hang ? 'may hang' : 'ok'}</span>`
    : '';
}

async function runTest() {
  if (state.busy) return;
  const started = busy('Running');
  $('explanation').hidden = true;
  try {
    const text = source.value;
    const answer = await ask({ op: 'run', text, file: FILE, ...options(), liveness: 'check' });
    state.last = { op: 'run', answer };
    state.runText = answer.ok ? text : null;
    if (!answer.ok) {
      $('verdict').hidden = true;
      $('summary').textContent = '';
      $('output').textContent = answer.error.rendered || answer.error.message;
      showDiagnostic(answer);
      return idle('error in the test', 'error');
    }
    showVerdict(answer.verdict, answer.json.liveness);
    showRun(answer);
    if (state.firstVerdictMs === null) state.firstVerdictMs = performance.now();
    idle(`done in ${((performance.now() - started) / 1000).toFixed(2)} s`);
  } catch (e) {
    idle(e.message === 'stopped' ? 'stopped' : e.message, e.message === 'stopped' ? '' : 'error');
  }
}

async function explainTest() {
  if (state.busy) return;
  const started = busy('Explaining');
  try {
    const text = source.value;
    const answer = await ask({ op: 'explain', text, file: FILE, ...options() });
    state.last = { op: 'explain', answer };
    if (!answer.ok) {
      $('verdict').hidden = true;
      $('summary').textContent = '';
      $('explanation').hidden = true;
      $('output').textContent = answer.error.rendered || answer.error.message;
      showDiagnostic(answer);
      return idle('error in the test', 'error');
    }
    // The badge and the findings are the explained test's: the verdict `run` gives it (explain
    // computes it), and the last Run's findings and liveness only while this is the text it ran.
    if (state.runText !== text) {
      const verdict = answer.json.program_verdict;
      if (verdict) showVerdict(verdict, null);
      else $('verdict').hidden = true;
      $('summary').textContent = '';
      $('output').innerHTML = '<p class="stale-note">Run checks this test’s findings and liveness; the explanation is below.</p>';
    }
    $('diagnostics').hidden = true;
    $('explanation').hidden = false;
    const folded = Number((answer.svg.match(/data-folded="(\d+)"/) || [])[1] || 0);
    $('all-events-box').hidden = folded === 0;
    $('all-events').checked = false;
    $('folded-count').textContent = folded;
    graph.show(answer.svg);
    $('explain-text').innerHTML = markOutput(answer.text);
    $('explanation').scrollIntoView({ behavior: 'smooth', block: 'start' });
    idle(`explained in ${((performance.now() - started) / 1000).toFixed(2)} s`);
  } catch (e) {
    idle(e.message === 'stopped' ? 'stopped' : e.message, e.message === 'stopped' ? '' : 'error');
  }
}

// ---------------------------------------------------------------- the drawing

const graph = new GraphView($('svg'), (z) => ($('zoom-level').textContent = `${Math.round(z * 100)}%`));
$('zoom-in').addEventListener('click', () => graph.setZoom(graph.zoom * 1.25));
$('zoom-out').addEventListener('click', () => graph.setZoom(graph.zoom / 1.25));
$('zoom-fit').addEventListener('click', () => graph.fit());
$('zoom-reset').addEventListener('click', () => graph.reset());
$('all-events').addEventListener('change', () => {
  const a = state.last && state.last.op === 'explain' && state.last.answer;
  if (a && a.ok) graph.show($('all-events').checked ? a.svg_all : a.svg);
});
window.ptxmmGraph = graph;

$('run').addEventListener('click', runTest);
$('explain').addEventListener('click', explainTest);
// The pending request's catch shows `stopped`; requests sent meanwhile wait for the new worker.
$('stop').addEventListener('click', stop);
$('share').addEventListener('click', async () => {
  const url = location.href.split('#')[0] + (await encodeHash());
  history.replaceState(null, '', url);
  try {
    await navigator.clipboard.writeText(url);
    setStatus('link copied');
  } catch (_) {
    setStatus('the link is in the address bar');
  }
});
$('examples').addEventListener('change', () => {
  const e = state.info.examples.find((x) => x.path === $('examples').value);
  if (!e) return;
  setSource(e.text);
  scheduleUrlUpdate();
  runTest();
});

// ---------------------------------------------------------------- start

startWorker();
render();
const info = await ready;
fillOptions(info);
let initial = { text: null, readings: [] };
try {
  initial = await decodeHash(location.hash);
} catch (e) {
  setStatus(`the link's test cannot be decoded: ${e.message}`, 'error');
}
const byPath = (p) => info.examples.find((x) => x.path === p);
const example = byPath(initial.example) || byPath('examples/MP.litmus');
setSource(initial.text ?? example.text);
if (!initial.text) $('examples').value = example.path;
applyOptions(initial);
idle('ready');
runTest();
