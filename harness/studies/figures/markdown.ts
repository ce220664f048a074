/** A markdown table from a header and rows, and the blocks of a doc a figure is rendered into. */

/** A cell's text with its pipes escaped, so that it stays one cell. */
const cell = (text: string): string => text.replaceAll('|', '\\|');

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The opening and closing markers of a rendered block, each on a line of its own. */
export const blockStart = (name: string): string => `<!-- figure: ${name} -->`;
export const BLOCK_END = '<!-- /figure -->';

const START = /^<!-- figure: ([\w/-]+) -->$/;

/** The names of the blocks a doc holds, in order (prose may quote a marker: only a line of its own is one). */
export function blocksIn(text: string): string[] {
  return text.split(/\r?\n/).flatMap((line) => {
    const match = START.exec(line);
    return match ? [match[1] ?? ''] : [];
  });
}

/**
 * `text` with each block's contents replaced by `render(name)`. A block opened inside another, or
 * never closed, or a close with no block, throws: rendering it would swallow the prose around it.
 */
export function renderBlocks(text: string, render: (name: string) => string): string {
  const lines = text.split(/\r?\n/);
  const out: string[] = [];
  let open: { readonly name: string; readonly line: number } | undefined;
  lines.forEach((line, index) => {
    const start = START.exec(line);
    if (start) {
      if (open)
        throw new Error(`line ${index + 1}: a figure block opened inside '${open.name}' (line ${open.line})`);
      open = { name: start[1] ?? '', line: index + 1 };
      out.push(line, render(open.name));
      return;
    }
    if (line === BLOCK_END) {
      if (!open) throw new Error(`line ${index + 1}: ${BLOCK_END} with no block open`);
      open = undefined;
      out.push(line);
      return;
    }
    if (!open) out.push(line);
  });
  if (open)
    throw new Error(`line ${open.line}: the figure block '${open.name}' is never closed (${BLOCK_END})`);
  return out.join('\n');
}
