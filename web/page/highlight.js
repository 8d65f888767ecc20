// Syntax highlighting of the litmus format (docs/litmus-format.md), one line at a time: each
// line becomes segments [text, class]; block comments `(* … *)` and quoted comments may span
// lines (the state carried from line to line is the construct left open).

const RULES = [
  ['comment', /^\(\*.*?(\*\)|$)/],
  ['string', /^"[^"]*("|$)/],
  ['config', /^<<[^>]*>>?/],
  ['keyword', /^PTX\s+\S+/],
  ['keyword', /^(~exists|exists|forall|not exists|locations|filter|PTX)\b/],
  ['thread', /^P\d+(?=\s*@|:)/],
  ['scope', /^@\s*(cta|cluster|gpu|sys)\b/],
  ['label', /^[A-Za-z_]\w*:(?!:)(?=\s|$)/],
  ['opcode', /^[a-z][a-z0-9_]*((\.|::)[A-Za-z0-9_]+)+/],
  ['register', /^(%[A-Za-z0-9_$]+|r\d+\b|p\d+\b)/],
  ['number', /^(0[xX][0-9a-fA-F]+|0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|-?\d+)\b/],
  ['ident', /^[A-Za-z_$][A-Za-z0-9_$]*/],
  ['separator', /^[|;]/],
  ['operator', /^(\/\\|\\\/|==|!=|<=|>=|[=<>~!&+\-])/],
];

/** Bare opcodes (no dot) that the format accepts; dotted words are opcodes by shape. */
const BARE_OPCODES = new Set(['mov', 'add', 'sub', 'mul', 'div', 'rem', 'and', 'or', 'xor', 'shl', 'shr', 'min', 'max',
  'ld', 'st', 'beq', 'bne', 'blt', 'bgt', 'ble', 'bge', 'goto', 'bra', 'ret', 'exit', 'membar', 'fence']);

/** How each construct that may span lines ends. */
const CLOSERS = { comment: '*)', string: '"' };

/** Segments of `line`, given the construct left open at its start (null, `comment`, `string`);
 *  returns the segments and the construct open at its end. */
export function highlightLine(line, open) {
  const segments = [];
  let rest = line;
  if (open) {
    const closer = CLOSERS[open];
    const end = rest.indexOf(closer);
    const cut = end < 0 ? rest.length : end + closer.length;
    segments.push([rest.slice(0, cut), open]);
    rest = rest.slice(cut);
    if (end >= 0) open = null;
  }
  while (rest.length) {
    const space = /^\s+/.exec(rest);
    if (space) {
      segments.push([space[0], '']);
      rest = rest.slice(space[0].length);
      continue;
    }
    let matched = false;
    for (const [cls, re] of RULES) {
      const m = re.exec(rest);
      if (!m || !m[0].length) continue;
      let kind = cls;
      if (cls === 'comment' && !m[0].endsWith('*)')) open = 'comment';
      if (cls === 'string' && (m[0].length === 1 || !m[0].endsWith('"'))) open = 'string';
      if (cls === 'ident' && BARE_OPCODES.has(m[0])) kind = 'opcode';
      segments.push([m[0], kind]);
      rest = rest.slice(m[0].length);
      matched = true;
      break;
    }
    if (!matched) {
      segments.push([rest[0], '']);
      rest = rest.slice(1);
    }
  }
  return { segments, open };
}

const escape = (s) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]);

/** HTML of the segments, with columns [from, to) (0-based) wrapped in an error mark. */
export function splitAtSpan(segments, from, to) {
  let col = 0;
  let html = '';
  const wrap = (text, cls) => (cls ? `<span class="tok-${cls}">${escape(text)}</span>` : escape(text));
  for (const [text, cls] of segments) {
    const start = col;
    const end = col + text.length;
    col = end;
    if (to <= start || from >= end) {
      html += wrap(text, cls);
      continue;
    }
    const a = Math.max(from, start) - start;
    const b = Math.min(to, end) - start;
    html += wrap(text.slice(0, a), cls);
    html += `<span class="error-span">${wrap(text.slice(a, b), cls)}</span>`;
    html += wrap(text.slice(b), cls);
  }
  // A span past the end of the line (e.g. a missing `;`) is marked as one blank column.
  if (from >= col && from >= 0) html += '<span class="error-span"> </span>';
  return html;
}
