// Browser tests of the playground (run by web/test.sh): headless Chromium loads the page served by
// `ptxmm serve`, and every check compares what the page shows with what the CLI prints.
//
// node browser.mjs URL PTXMM_BINARY OUT_DIR
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [url, ptxmm, outDir] = process.argv.slice(2);
const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
fs.mkdirSync(outDir, { recursive: true });

let failures = 0;
let passed = 0;
function check(ok, what, detail = '') {
  if (ok) {
    passed++;
    console.log(`  ok   ${what}`);
  } else {
    failures++;
    console.log(`  FAIL ${what}${detail ? `: ${detail}` : ''}`);
  }
}

/** The CLI's verdict and liveness of each test, from `ptxmm run --json` (one record per line). */
function cliRecords(files) {
  let out;
  try {
    out = execFileSync(ptxmm, ['run', '--json', ...files], { cwd: repo, encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    out = e.stdout; // exit code 1 for Inconclusive / Unknown tests; the records are printed all the same
  }
  return out.trim().split('\n').map((l) => JSON.parse(l));
}

const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
page.on('pageerror', (e) => check(false, 'no error in the page', e.message));

/** Wait until the page is idle again after a Run or Explain started. */
async function settled(timeout = 60000) {
  await page.waitForFunction(() => window.ptxmmPlayground && !window.ptxmmPlayground.busy && window.ptxmmPlayground.last, null, { timeout });
}
async function pageVerdict() {
  return page.evaluate(() => {
    const a = window.ptxmmPlayground.last.answer;
    return {
      ok: a.ok,
      verdict: a.ok ? a.json.verdict ?? null : null,
      liveness: a.ok && a.json.liveness ? a.json.liveness.status : null,
      shown: document.getElementById('verdict').textContent,
    };
  });
}
/** Type a test into the editor (as a user would paste it) and press Run. */
async function runText(text) {
  await page.evaluate(() => (window.ptxmmPlayground.last = null));
  await page.fill('#source', text);
  await page.click('#run');
  await settled();
}

// ------------------------------------------------------------ load, MP, time to first verdict
console.log('load and MP');
await page.goto(url);
await page.waitForFunction(() => window.ptxmmPlayground && window.ptxmmPlayground.firstVerdictMs !== null, null, { timeout: 30000 });
const firstVerdictMs = await page.evaluate(() => window.ptxmmPlayground.firstVerdictMs);
console.log(`  load to first verdict: ${firstVerdictMs.toFixed(0)} ms`);
check(firstVerdictMs < 2000, 'the first verdict appears within 2 s of loading', `${firstVerdictMs.toFixed(0)} ms`);
const [mpCli] = cliRecords(['examples/MP.litmus']);
let v = await pageVerdict();
check(v.verdict === mpCli.verdict && v.shown === `Verdict: ${mpCli.verdict}`, `MP: ${mpCli.verdict} as the CLI says`, JSON.stringify(v));
const mpText = execFileSync(ptxmm, ['run', 'examples/MP.litmus'], { cwd: repo, encoding: 'utf8' });
const pageText = await page.evaluate(() => window.ptxmmPlayground.last.answer.text);
check(pageText + '\n' === mpText, 'MP: the output is the CLI’s, byte for byte');
await page.screenshot({ path: path.join(outDir, 'mp.png') });

// ------------------------------------------------------------ an Undefined TMA test
console.log('Undefined TMA test');
const u03 = 'tests/async/U03-bar-sync-no-proxy-fence.litmus';
await runText(fs.readFileSync(path.join(repo, u03), 'utf8'));
v = await pageVerdict();
check(v.verdict === 'Undefined' && v.verdict === cliRecords([u03])[0].verdict, 'U03 (bar.sync before a TMA store): Undefined', JSON.stringify(v));
const hint = await page.textContent('#output .hint');
check(/fence\.proxy\.async/.test(hint || ''), 'U03: the finding’s hint names fence.proxy.async', hint);
await page.screenshot({ path: path.join(outDir, 'undefined-tma.png') });

// ------------------------------------------------------------ no stale verdict
console.log('a malformed test after an Undefined one shows no verdict');
/** Whether the verdict badge is on screen (not only in the DOM). */
async function badgeVisible() {
  return page.evaluate(() => {
    const b = document.getElementById('verdict');
    return !b.hidden && getComputedStyle(b).display !== 'none' && b.getBoundingClientRect().height > 0;
  });
}
await runText('PTX broken\n{ x=0; }\nP0 ;\nst.weak x, ;\nexists (x == 1)\n');
check(!(await pageVerdict()).ok && !(await badgeVisible()), 'after U03 (Undefined), a parse error shows no verdict badge');
{
  // A fresh page: MP is run on load; a malformed paste must not leave its Forbidden badge.
  const fresh = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  await fresh.goto(url);
  await fresh.waitForFunction(() => window.ptxmmPlayground && window.ptxmmPlayground.firstVerdictMs !== null, null, { timeout: 30000 });
  await fresh.evaluate(() => (window.ptxmmPlayground.last = null));
  await fresh.fill('#source', 'PTX broken\nP0 ;\nld.weak r0, ;\n');
  await fresh.click('#run');
  await fresh.waitForFunction(() => !window.ptxmmPlayground.busy && window.ptxmmPlayground.last, null, { timeout: 60000 });
  const shown = await fresh.evaluate(() => {
    const b = document.getElementById('verdict');
    return !b.hidden && getComputedStyle(b).display !== 'none' && b.getBoundingClientRect().height > 0;
  });
  check(!shown, 'on a fresh page, a malformed paste shows no verdict badge (MP’s is gone)');
  await fresh.screenshot({ path: path.join(outDir, 'parse-error-no-verdict.png') });
  await fresh.close();
}

// ------------------------------------------------------------ no stale verdict after Explain
console.log('Explain after a Run of another test shows the explained test’s verdict');
{
  await runText(fs.readFileSync(path.join(repo, u03), 'utf8'));
  const other = 'tests/async/pipeline-ring-2stage-2consumer-2laps.litmus';
  await explainText(fs.readFileSync(path.join(repo, other), 'utf8'));
  const cli = cliRecords([other])[0].verdict;
  const shown = await page.evaluate(() => ({
    badge: document.getElementById('verdict').hidden ? null : document.getElementById('verdict').textContent,
    output: document.getElementById('output').textContent,
    summary: document.getElementById('summary').textContent,
  }));
  check(shown.badge === `Verdict: ${cli}`, `after U03 is run, Explain of another test shows its verdict (${cli})`, JSON.stringify(shown.badge));
  check(!/fence\.proxy\.async|\[/.test(shown.output) && shown.summary === '', 'after U03 is run, Explain of another test shows none of U03’s findings or liveness', shown.output);
  // Explaining the test that was just run keeps its findings.
  await runText(fs.readFileSync(path.join(repo, u03), 'utf8'));
  await page.click('#explain');
  await settled();
  const kept = await page.textContent('#output .hint');
  check(/fence\.proxy\.async/.test(kept || ''), 'Explain of the test just run keeps its findings', kept);
}
// The widest drawing fits the window or scrolls inside its panel; the header is one row.
for (const width of [1400, 1024]) {
  await page.setViewportSize({ width, height: 950 });
  await explainText(fs.readFileSync(path.join(repo, 'tests/kernels/tma_store-bug.litmus'), 'utf8'));
  const fit = await page.evaluate(() => {
    const panel = document.getElementById('svg');
    const r = panel.getBoundingClientRect();
    return { right: r.right, window: window.innerWidth, page: document.documentElement.scrollWidth, scrolls: panel.scrollWidth > panel.clientWidth, wide: panel.scrollWidth };
  });
  check(fit.right <= fit.window && fit.page <= fit.window, `at ${width} px the drawing's panel is inside the window (it scrolls inside when wider)`, JSON.stringify(fit));
  // A second row: an item that starts below where another ends.
  const rows = await page.evaluate(() => {
    const r = [...document.querySelectorAll('header > *')].map((e) => e.getBoundingClientRect()).filter((b) => b.height > 0);
    const lowestBottom = Math.min(...r.map((b) => b.bottom));
    return r.some((b) => b.top >= lowestBottom) ? 2 : 1;
  });
  if (width === 1400) check(rows === 1, 'at 1400 px the header is one row', `${rows} rows`);
}
await page.setViewportSize({ width: 1500, height: 950 });

// ------------------------------------------------------------ a hanging mbarrier test
console.log('hanging mbarrier test');
const u12 = 'tests/async/U12-wrong-parity.litmus';
await runText(fs.readFileSync(path.join(repo, u12), 'utf8'));
v = await pageVerdict();
check(v.liveness === 'may_hang' && cliRecords([u12])[0].liveness.status === 'may_hang', 'U12 (wrong parity): liveness may hang', JSON.stringify(v));
const summary = await page.textContent('#summary');
check(/may hang/.test(summary), 'U12: the page says “Liveness: may hang”', summary);
check(/P\d+ .*line \d+/.test(await page.textContent('#output')) || /stuck|waits/.test(await page.textContent('#output')), 'U12: the stuck thread is shown');
await page.screenshot({ path: path.join(outDir, 'hang.png') });

// ------------------------------------------------------------ a malformed test
console.log('malformed test');
const mp = fs.readFileSync(path.join(repo, 'examples/MP.litmus'), 'utf8').split('\n');
const badLine = mp.findIndex((l) => l.includes('ld.acquire.gpu'));
mp[badLine] = mp[badLine].replace('ld.acquire.gpu', 'ld.aquire.gpu');
const bad = mp.join('\n');
fs.writeFileSync(path.join(outDir, 'playground.litmus'), bad);
let cliError = '';
try {
  execFileSync(ptxmm, ['run', 'playground.litmus'], { cwd: outDir, encoding: 'utf8', stdio: 'pipe' });
} catch (e) {
  cliError = e.stderr;
}
await runText(bad);
const diag = await page.textContent('#diagnostics');
const where = `playground.litmus:${badLine + 1}:`;
check(diag.includes(where), `the diagnostic names ${where}`, diag.split('\n')[0]);
check(diag.trim() === cliError.trim(), 'the diagnostic is the CLI’s message', `${diag.split('\n')[0]} vs ${cliError.split('\n')[0]}`);
// The CLI's caret line says which columns the span covers.
const cliColumn = Number(cliError.match(/playground\.litmus:\d+:(\d+)/)[1]);
const carets = cliError.split('\n').find((l) => /^\s*\d+ │/.test(l) === false && /\^+/.test(l)).match(/\^+/)[0].length;
const expectedSpan = bad.split('\n')[badLine].substr(cliColumn - 1, carets);
const marked = await page.evaluate(() => {
  const lines = document.getElementById('highlight').innerHTML.split('\n');
  const i = lines.findIndex((l) => l.includes('error-line'));
  return { line: i + 1, span: document.querySelector('#highlight .error-span')?.textContent };
});
check(marked.line === badLine + 1 && marked.span === expectedSpan, `line ${badLine + 1} is marked, the span \`${expectedSpan}\` underlined`, JSON.stringify(marked));
await page.screenshot({ path: path.join(outDir, 'diagnostic.png') });

// ------------------------------------------------------------ Explain: the SVG
console.log('explain');
await page.evaluate(() => (window.ptxmmPlayground.last = null));
await page.selectOption('#examples', 'examples/MP.litmus');
await settled();
await page.evaluate(() => (window.ptxmmPlayground.last = null));
await page.click('#explain');
await settled();
const svgCount = await page.locator('#svg svg').count();
check(svgCount === 1, 'Explain shows an SVG');
const cycle = await page.locator('#svg path.edge.highlighted').count();
check(cycle > 0, 'the violated cycle is highlighted', `${cycle} edges`);
const cliSvg = execFileSync(ptxmm, ['explain', '--svg', 'examples/MP.litmus'], { cwd: repo, encoding: 'utf8' });
const pageSvg = await page.evaluate(() => window.ptxmmPlayground.last.answer.svg);
check(pageSvg === cliSvg, 'the SVG is the one `explain --svg` draws');
const cliSvgAll = execFileSync(ptxmm, ['explain', '--svg', '--all-events', 'examples/MP.litmus'], { cwd: repo, encoding: 'utf8' });
check((await page.evaluate(() => window.ptxmmPlayground.last.answer.svg_all)) === cliSvgAll, 'All events is the drawing of `explain --svg --all-events`');
await page.screenshot({ path: path.join(outDir, 'explain.png'), fullPage: true });

// ------------------------------------------------------------ graphs for people: the ring, a 4-thread TMA store
/** The smallest text of the drawing as shown: its on-screen font size (CSS size times the zoom)
 *  and the height of its box, over every text element. */
async function smallestText() {
  return page.evaluate(() => {
    const texts = [...document.querySelectorAll('#svg svg text')];
    const font = texts.map((t) => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
    const height = texts.map((t) => t.getBoundingClientRect().height);
    return { count: texts.length, font: Math.min(...font), height: Math.min(...height) };
  });
}
/** Whether the highlighted events (`rect.focus`) are inside the drawing's panel. */
async function focusInView() {
  return page.evaluate(() => {
    const panel = document.getElementById('svg').getBoundingClientRect();
    const focus = [...document.querySelectorAll('#svg rect.focus')].map((r) => r.getBoundingClientRect());
    return focus.length > 0 && focus.some((b) => b.right > panel.left && b.left < panel.right && b.bottom > panel.top && b.top < panel.bottom);
  });
}
async function explainText(text) {
  await page.evaluate(() => (window.ptxmmPlayground.last = null));
  await page.fill('#source', text);
  await page.click('#explain');
  await settled();
}
const ringPath = 'tests/async/pipeline-ring-no-proxy-fence.litmus';
const ringText = fs.readFileSync(path.join(repo, ringPath), 'utf8');
for (const [what, file] of [['the 3-thread 2-lap TMA ring', ringPath], ['a 4-thread TMA store', 'tests/kernels/tma_store-bug.litmus']]) {
  console.log(`explain: ${what}`);
  await explainText(fs.readFileSync(path.join(repo, file), 'utf8'));
  const small = await smallestText();
  console.log(`  smallest text at the default zoom: ${small.font.toFixed(2)} px font, ${small.height.toFixed(2)} px high (${small.count} texts)`);
  check(small.count > 10 && small.font >= 10.99 && small.height >= 11, `${what}: every text is at least 11 px at the default zoom`, JSON.stringify(small));
  const race = await page.locator('#svg path.edge.highlighted.race').count();
  check(race > 0 && (await focusInView()), `${what}: the racing pair is highlighted and in view`, `${race} race edges`);
  const folded = await page.evaluate(() => ({ boxes: document.querySelectorAll('#svg rect.folded').length, shown: !document.getElementById('all-events-box').hidden }));
  check(folded.boxes > 0 && folded.shown, `${what}: initial writes and other variables are folded, with a way to show them`, JSON.stringify(folded));
  const cli = execFileSync(ptxmm, ['explain', '--svg', file], { cwd: repo, encoding: 'utf8' });
  check((await page.evaluate(() => window.ptxmmPlayground.last.answer.svg)) === cli, `${what}: the drawing is the one of \`explain --svg\``);
  await page.locator('#explanation').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(outDir, `explain-${path.basename(file, '.litmus')}.png`) });
  // The drawing's panel alone, for the README (docs/images/ring-explained.png).
  if (file === ringPath) await page.locator('#svg').screenshot({ path: path.join(outDir, 'ring-explained.png') });
}
{
  // The ring again: zoom, pan, all events.
  await explainText(ringText);
  const zoom = () => page.evaluate(() => window.ptxmmGraph.zoom);
  const z0 = await zoom();
  await page.click('#zoom-in');
  const z1 = await zoom();
  await page.click('#zoom-out');
  await page.click('#zoom-fit');
  const zFit = await zoom();
  // The panel at the top of the window, the pointer inside it.
  await page.evaluate(() => document.getElementById('svg').scrollIntoView({ block: 'start' }));
  const box = await page.locator('#svg').boundingBox();
  const inside = { x: box.x + box.width / 2, y: box.y + Math.min(box.height / 2, 300) };
  await page.mouse.move(inside.x, inside.y);
  await page.mouse.wheel(0, -300);
  const zWheel = await zoom();
  check(z0 === 1 && z1 > z0 && zFit < z0 && zWheel > zFit, 'zoom: the buttons and the wheel', JSON.stringify({ z0, z1, zFit, zWheel }));
  await page.click('#zoom-reset');
  const before = await page.evaluate(() => [document.getElementById('svg').scrollLeft, document.getElementById('svg').scrollTop]);
  await page.evaluate(() => document.getElementById('svg').scrollIntoView({ block: 'start' }));
  await page.mouse.move(inside.x, inside.y);
  await page.mouse.down();
  await page.mouse.move(inside.x - 120, inside.y - 150, { steps: 5 });
  await page.mouse.up();
  const after = await page.evaluate(() => [document.getElementById('svg').scrollLeft, document.getElementById('svg').scrollTop]);
  check(after[1] > before[1], 'pan: dragging the drawing scrolls it', JSON.stringify({ before, after }));
  const counts = () => page.evaluate(() => ({ events: document.querySelectorAll('#svg rect.event').length, folded: document.querySelectorAll('#svg rect.folded').length }));
  const foldedCounts = await counts();
  await page.check('#all-events');
  const allCounts = await counts();
  check(allCounts.folded === 0 && allCounts.events > foldedCounts.events, 'All events draws every event', JSON.stringify({ foldedCounts, allCounts }));
  check((await smallestText()).font >= 10.99, 'All events: still at least 11 px at the default zoom');
  await page.screenshot({ path: path.join(outDir, 'explain-ring-all-events.png') });
}

// ------------------------------------------------------------ findings first, linked to their lines
console.log('findings');
await runText(ringText);
const layout = await page.evaluate(() => {
  const out = document.getElementById('output');
  const findings = out.querySelector('pre.findings');
  const herd = out.querySelector('details#herd');
  return {
    findingsFirst: !!findings && !!herd && (findings.compareDocumentPosition(herd) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0,
    herdFolded: !!herd && !herd.open,
    links: out.querySelectorAll('pre.findings a.line-link').length,
  };
});
check(layout.findingsFirst && layout.herdFolded && layout.links > 0, 'Undefined ring: the findings come first, herd7’s block is folded below them', JSON.stringify(layout));
await page.check('#show-columns');
const findingLink = page.locator('#output pre.findings a.line-link').nth(1);
const [thread, lineNo] = [await findingLink.getAttribute('data-thread'), Number(await findingLink.getAttribute('data-line'))];
await findingLink.click();
// The instruction the finding cites: that thread's column of that line of the file.
const ringLines = ringText.split('\n');
const header = ringLines.find((l) => /^\s*P0@/.test(l)).replace(/;\s*$/, '').split('|').map((c) => c.trim().match(/^P\d+/)[0]);
const cited = ringLines[lineNo - 1].replace(/;\s*$/, '').split('|')[header.indexOf(thread)].trim();
const selection = await page.evaluate(() => {
  const s = document.getElementById('source');
  const lineHeight = parseFloat(getComputedStyle(s).lineHeight);
  return { text: s.value.slice(s.selectionStart, s.selectionEnd), focused: document.activeElement === s, top: s.scrollTop, height: s.clientHeight, lineHeight, left: s.scrollLeft };
});
const lineTop = (lineNo - 1) * selection.lineHeight;
check(selection.text === cited && selection.focused, `a finding’s “${thread} line ${lineNo}” selects \`${cited}\` in the editor`, JSON.stringify(selection));
check(lineTop >= selection.top && lineTop + selection.lineHeight <= selection.top + selection.height, `line ${lineNo} is scrolled into view`, JSON.stringify({ lineTop, ...selection }));
const current = await page.evaluate(() => document.querySelector('#columns td.current')?.textContent);
check(current === cited, 'the Thread columns view marks the same instruction', current);
await page.screenshot({ path: path.join(outDir, 'findings-link.png') });

// ------------------------------------------------------------ the link reproduces the test
console.log('link');
await page.fill('#source', bad);
await page.selectOption('#model', 'ptx-7.5');
await page.waitForTimeout(600);
const link = page.url();
const second = await browser.newPage();
await second.goto(link);
await second.waitForFunction(() => window.ptxmmPlayground && window.ptxmmPlayground.last, null, { timeout: 30000 });
const restored = await second.evaluate(() => ({ text: document.getElementById('source').value, model: document.getElementById('model').value }));
check(restored.text === bad && restored.model === 'ptx-7.5', 'a link reproduces the test and the model', link.slice(0, 80));
check(await second.evaluate(() => document.getElementById('verdict').hidden), 'the link’s malformed test shows no verdict');
await second.close();
await page.selectOption('#model', 'ptx');
{
  // A shared link opens and runs its test: the verdict shown is the test's, not MP's.
  await page.click('#share');
  await page.fill('#source', fs.readFileSync(path.join(repo, u03), 'utf8'));
  await page.waitForTimeout(600);
  const shared = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  await shared.goto(page.url());
  await shared.waitForFunction(() => window.ptxmmPlayground && window.ptxmmPlayground.last && !window.ptxmmPlayground.busy, null, { timeout: 30000 });
  const ran = await shared.evaluate(() => ({ op: window.ptxmmPlayground.last.op, shown: document.getElementById('verdict').textContent, hidden: document.getElementById('verdict').hidden }));
  check(ran.op === 'run' && !ran.hidden && ran.shown === 'Verdict: Undefined', 'a shared link runs its test on open', JSON.stringify(ran));
  await shared.close();
}

// ------------------------------------------------------------ Stop during a long search
console.log('stop');
// Five threads that each store one location and load the four others, under a `forall`
// condition (enumerated in full: an `exists` one is settled by the directed search past the
// enumeration budget in about a second): the search runs into its limits after seconds (about
// 8 s natively), so it is still running when Stop is pressed.
const n = 5;
const loads = Array.from({ length: n - 1 }, (_, k) =>
  Array.from({ length: n }, (_, i) => ` ld.relaxed.gpu r${k + 1}, x${(i + k + 1) % n}`).join(' |') + ' ;');
const sb = [
  'PTX ALL-long',
  '{',
  Array.from({ length: n }, (_, i) => `x${i}=0;`).join(' '),
  '}',
  Array.from({ length: n }, (_, i) => ` P${i}@cta ${i},gpu 0`).join(' |') + ' ;',
  Array.from({ length: n }, (_, i) => ` st.relaxed.gpu x${i}, 1`).join(' |') + ' ;',
  ...loads,
  `forall (~(${Array.from({ length: n }, (_, i) => `P${i}:r1 == 0`).join(' /\\ ')}))`,
].join('\n');
await page.fill('#timeout', '0');
await page.fill('#source', sb);
await page.click('#run');
await page.waitForTimeout(1500);
const stillBusy = await page.evaluate(() => window.ptxmmPlayground.busy);
const progress = await page.textContent('#status-text');
check(stillBusy && /Running… \d+\.\d s/.test(progress), 'a long search shows its progress', progress);
await page.click('#stop');
await page.waitForFunction(() => !window.ptxmmPlayground.busy, null, { timeout: 5000 });
check((await page.textContent('#status-text')) === 'stopped', 'Stop ends the search');
await page.fill('#timeout', '10');
await runText(fs.readFileSync(path.join(repo, 'examples/MP.litmus'), 'utf8'));
check((await pageVerdict()).verdict === mpCli.verdict, 'after Stop the next Run works');

// ------------------------------------------------------------ every test of tests/async, from the menu
console.log('tests/async: the page against the CLI');
const asyncTests = fs.readdirSync(path.join(repo, 'tests/async')).filter((f) => f.endsWith('.litmus')).sort().map((f) => `tests/async/${f}`);
const cli = new Map(cliRecords(asyncTests).map((r) => [r.file, r]));
let agree = 0;
const started = Date.now();
for (const t of asyncTests) {
  await page.evaluate(() => (window.ptxmmPlayground.last = null));
  await page.selectOption('#examples', t);
  await settled();
  const p = await pageVerdict();
  const c = cli.get(t);
  const same = c && p.verdict === c.verdict && p.liveness === (c.liveness ? c.liveness.status : null);
  if (same) agree++;
  else console.log(`  FAIL ${t}: page ${p.verdict}/${p.liveness}, CLI ${c && c.verdict}/${c && c.liveness && c.liveness.status}`);
}
console.log(`  ${agree} of ${asyncTests.length} tests of tests/async: the same verdict and liveness as the CLI (${((Date.now() - started) / 1000).toFixed(1)} s)`);
check(agree === asyncTests.length && asyncTests.length > 0, 'every test of tests/async agrees with the CLI');

// ------------------------------------------------------------ the screenshot for the README
await page.selectOption('#examples', 'tests/async/U03-bar-sync-no-proxy-fence.litmus');
await settled();
await page.click('#explain');
await settled();
await page.evaluate(() => window.scrollTo(0, 0));
await page.screenshot({ path: path.join(outDir, 'playground.png') });

await browser.close();
fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify({ passed, failures, firstVerdictMs, asyncAgree: agree, asyncTotal: asyncTests.length }, null, 1));
console.log(`browser tests: ${passed} passed, ${failures} failed; screenshots in ${outDir}`);
process.exit(failures ? 1 : 0);
