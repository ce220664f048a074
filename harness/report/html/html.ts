/** The few string helpers an HTML page built by concatenation needs to be safe. */

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text or attribute content: every value that comes from a report goes through here. */
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character);
}

/**
 * JSON inside `<script type="application/json">`: `<` is escaped so that no string in the data
 * (an event id, a poison kind) can close the script element.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Integer cents as `-1,234.56`, the way the terminal table prints money. */
export function money(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;
}
