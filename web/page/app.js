// The playground page: editor, options, Run / Explain through the worker, the URL as a link.
import { highlightLine, splitAtSpan } from './highlight.js';

const $ = (id) => document.getElementById(id);
const source = $('source');
const highlight = $('highlight');
const FILE = 'playground.litmus';

/** What the page shows, for the browser tests to read (window.ptxmmPlayground). */
const state = { ready: false, info: null, busy: false, last: null, firstVerdictMs: null, diagnostic: null };
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
  syncScroll();
}
function syncScroll() {
  highlight.scrollTop = source.scrollTop;
  highlight.scrollLeft = source.scrollLeft;
}
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

/** The CLI's output with its structure marked: the verdict, rule names, hints. */
function markOutput(text) {
  return escapeHtml(text)
    .split('\n')
    .map((l) => {
      if (/^Verdict: /.test(l)) return `<b class="verdict-line">${l}</b>`;
      if (/^\s+hint: /.test(l)) return `<span class="hint">${l}</span>`;
      if (/^Liveness: may hang/.test(l)) return `<span class="hang">${l}</span>`;
      return l.replace(/^(\s+)\[([\w.-]+)\]/, '$1<span class="rule">[$2]</span>');
    })
    .join('\n');
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
    const answer = await ask({ op: 'run', text: source.value, file: FILE, ...options(), liveness: 'check' });
    state.last = { op: 'run', answer };
    if (!answer.ok) {
      $('verdict').hidden = true;
      $('summary').textContent = '';
      $('output').textContent = answer.error.rendered || answer.error.message;
      showDiagnostic(answer);
      return idle('error in the test', 'error');
    }
    showVerdict(answer.verdict, answer.json.liveness);
    $('output').innerHTML = (answer.stderr.length ? `<span class="stderr">${escapeHtml(answer.stderr.join('\n'))}</span>\n` : '') + markOutput(answer.text);
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
    const answer = await ask({ op: 'explain', text: source.value, file: FILE, ...options() });
    state.last = { op: 'explain', answer };
    if (!answer.ok) {
      $('verdict').hidden = true;
      $('summary').textContent = '';
      $('explanation').hidden = true;
      $('output').textContent = answer.error.rendered || answer.error.message;
      showDiagnostic(answer);
      return idle('error in the test', 'error');
    }
    $('explanation').hidden = false;
    $('svg').innerHTML = answer.svg;
    $('explain-text').textContent = answer.text;
    $('explanation').scrollIntoView({ behavior: 'smooth', block: 'start' });
    idle(`explained in ${((performance.now() - started) / 1000).toFixed(2)} s`);
  } catch (e) {
    idle(e.message === 'stopped' ? 'stopped' : e.message, e.message === 'stopped' ? '' : 'error');
  }
}

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
