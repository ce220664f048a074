/** A markdown table from a header and rows, and the blocks of a doc a figure is rendered into. */

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The opening and closing markers of a rendered block: `<!-- figure: NAME -->` … `<!-- /figure -->`. */
export const blockStart = (name: string): string => `<!-- figure: ${name} -->`;
export const BLOCK_END = '<!-- /figure -->';

/** The names of the blocks a doc holds, in order: each marker on a line of its own (prose may quote one). */
export function blocksIn(text: string): string[] {
  return [...text.matchAll(/^<!-- figure: ([\w/-]+) -->$/gm)].map((match) => match[1] ?? '');
}

/** `text` with each of its blocks' contents replaced by `render(name)`; a block with no end throws. */
export function renderBlocks(text: string, render: (name: string) => string): string {
  return text.replace(/^<!-- figure: ([\w/-]+) -->\n([\s\S]*?)^<!-- \/figure -->$/gm, (_, name: string) => {
    return `${blockStart(name)}\n${render(name)}\n${BLOCK_END}`;
  });
}
