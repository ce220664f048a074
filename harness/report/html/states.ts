/**
 * How the report shows each per-event state: a colour, and — so colour is never the only cue — a
 * glyph inside the cell and a hatch for the states where the money went missing. The legend, the
 * cells, the tooltips and the aggregated bars all read this one table.
 */
import { EVENT_STATES, type EventState } from '../../../verifier/event-details.js';

/** The verifier's per-event states plus one the report adds: applied ids the producer never sent. */
export type CellState = EventState | typeof UNEXPECTED;
export const UNEXPECTED = 'e';

export interface StateStyle {
  readonly key: CellState;
  readonly label: string;
  /** One sentence a learner can read in the legend and the tooltip. */
  readonly meaning: string;
  /** The glyph inside the cell; `n` means the number of applications. */
  readonly glyph: string;
  /** How the legend names the glyph and pattern. */
  readonly glyphLegend: string;
  readonly background: string;
  readonly foreground: string;
  /** Diagonal hatching: the event's money never arrived. */
  readonly hatched: boolean;
}

/** In legend order: the normal case first, then what went wrong, from worst to mildest. */
export const STATE_STYLES: readonly StateStyle[] = [
  {
    key: EVENT_STATES.appliedOnce,
    label: 'applied once',
    meaning: 'credited exactly once: what every mode should do',
    glyph: '',
    glyphLegend: 'plain',
    background: '#b8e0c2',
    foreground: '#1d4d2b',
    hatched: false,
  },
  {
    key: EVENT_STATES.duplicated,
    label: 'duplicated ×n',
    meaning:
      'credited n times: its message came back (a crash before the batch was acknowledged) and was applied again',
    glyph: 'n',
    glyphLegend: 'the number of applications',
    background: '#f5a623',
    foreground: '#3d2600',
    hatched: false,
  },
  {
    key: EVENT_STATES.lost,
    label: 'lost',
    meaning: 'never credited and not in the dead-letter queue: the money vanished',
    glyph: '×',
    glyphLegend: '× on hatching',
    background: '#c62828',
    foreground: '#ffffff',
    hatched: true,
  },
  {
    key: EVENT_STATES.deadLettered,
    label: 'dead-lettered',
    meaning: 'never credited, kept in the dead-letter queue for someone to look at',
    glyph: 'D',
    glyphLegend: 'D',
    background: '#3b7dd8',
    foreground: '#ffffff',
    hatched: false,
  },
  {
    key: EVENT_STATES.deadLetteredUnseen,
    label: 'dead-lettered, not seen',
    meaning:
      "never credited, in a FIFO dead-letter queue behind its account's first messages, which a reader that does not delete cannot see past: counted from them and the queue's message count",
    glyph: 'h',
    glyphLegend: 'h (hidden)',
    background: '#8fb4ea',
    foreground: '#0d2b57',
    hatched: false,
  },
  {
    key: EVENT_STATES.appliedAndDeadLettered,
    label: 'applied and dead-lettered',
    meaning: 'credited, and a copy also ended in the dead-letter queue: replaying it would credit again',
    glyph: 'A',
    glyphLegend: 'A',
    background: '#8e44ad',
    foreground: '#ffffff',
    hatched: false,
  },
  {
    key: EVENT_STATES.poisonDeadLettered,
    label: 'poison, dead-lettered',
    meaning: 'an invalid body, sent on purpose; never credited and kept in the dead-letter queue (correct)',
    glyph: 'P',
    glyphLegend: 'P',
    background: '#9aa5b1',
    foreground: '#1f2933',
    hatched: false,
  },
  {
    key: EVENT_STATES.poisonLost,
    label: 'poison, lost',
    meaning: 'an invalid body the consumer deleted before it validated it: gone, nobody will see it',
    glyph: 'P',
    glyphLegend: 'P on hatching',
    background: '#7b8794',
    foreground: '#ffffff',
    hatched: true,
  },
  {
    key: EVENT_STATES.poisonApplied,
    label: 'poison, applied',
    meaning: 'an invalid body that was credited: a bug',
    glyph: '!',
    glyphLegend: '!',
    background: '#111827',
    foreground: '#fde047',
    hatched: false,
  },
  {
    key: UNEXPECTED,
    label: 'unexpected',
    meaning: 'an event id the producer never sent was credited: a bug',
    glyph: '?',
    glyphLegend: '?',
    background: '#111827',
    foreground: '#ffffff',
    hatched: false,
  },
];

const BY_KEY = new Map(STATE_STYLES.map((style) => [style.key, style]));

export function stateStyle(key: string): StateStyle {
  const style = BY_KEY.get(key as CellState);
  if (!style) throw new Error(`unknown event state ${JSON.stringify(key)}`);
  return style;
}

/** Cells per state of one mode: the states string plus the unexpected ids. */
export function countStates(states: string, unexpected: number): Map<CellState, number> {
  const counts = new Map<CellState, number>(STATE_STYLES.map((style) => [style.key, 0]));
  for (const character of states) {
    const key = stateStyle(character).key;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  counts.set(UNEXPECTED, unexpected);
  return counts;
}
