// The test's code as a table: in the litmus format each thread is a column (cells separated by
// `|`, rows ended by `;`, a header row `P0@cta 0,gpu 0 | P1… ;`). The page uses it for the
// Thread columns view and to select one thread's cell of a line (a finding's "P1 line 15").

/** Cells of one line: text and offsets within the line (the row's `;` is left out). */
function splitCells(line) {
  const semi = line.search(/;\s*$/);
  const body = semi < 0 ? line : line.slice(0, semi);
  const cells = [];
  let start = 0;
  for (let i = 0; i <= body.length; i++) {
    if (i === body.length || body[i] === '|') {
      cells.push({ text: body.slice(start, i), start, end: i });
      start = i + 1;
    }
  }
  return cells;
}

const HEADER_CELL = /^\s*P\d+\s*(@|$)/;
const AFTER_CODE = /^\s*(~?exists|forall|not\s+exists|locations|filter)\b/;

/** The code section of `text`: { threads: ['P0', …], rows: [{ line, cells: [{ text, start, end }] }] }
 *  with 1-based lines and offsets into `text`; null when no thread header is found. */
export function parseColumns(text) {
  const lines = text.split('\n');
  const starts = [];
  let offset = 0;
  for (const l of lines) {
    starts.push(offset);
    offset += l.length + 1;
  }
  const header = lines.findIndex((l) => /;\s*$/.test(l) && splitCells(l).every((c) => HEADER_CELL.test(c.text)));
  if (header < 0) return null;
  const threads = splitCells(lines[header]).map((c) => c.text.trim().match(/^P\d+/)[0]);
  const rows = [];
  for (let i = header + 1; i < lines.length; i++) {
    const l = lines[i];
    if (AFTER_CODE.test(l)) break;
    if (l.trim() === '') continue;
    const cells = splitCells(l).map((c) => ({ text: c.text, start: starts[i] + c.start, end: starts[i] + c.end }));
    rows.push({ line: i + 1, cells });
  }
  return { threads, rows };
}

/** The offsets in `text` of `thread`'s instruction on `line` (trimmed), or of the whole line when
 *  the line has no such cell. */
export function siteRange(text, thread, line) {
  const lines = text.split('\n');
  if (line < 1 || line > lines.length) return null;
  const lineStart = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
  const whole = { start: lineStart, end: lineStart + lines[line - 1].length, column: 0 };
  const table = parseColumns(text);
  const col = table ? table.threads.indexOf(thread) : -1;
  const row = table && table.rows.find((r) => r.line === line);
  const cell = row && col >= 0 ? row.cells[col] : null;
  if (!cell) return whole;
  const lead = cell.text.length - cell.text.trimStart().length;
  const trail = cell.text.length - cell.text.trimEnd().length;
  if (lead === cell.text.length) return { start: cell.start, end: cell.end, column: cell.start - lineStart };
  return { start: cell.start + lead, end: cell.end - trail, column: cell.start + lead - lineStart };
}
