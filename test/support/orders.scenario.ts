/**
 * A scenario module as `npm run explore -- --scenario FILE` takes one: its default export. Two
 * orders in one batch, on the work-first consumer: its duplicates, by cell.
 */
import { ORDERS, ordersScenario, workFirst } from './orders-scenario.js';

export default ordersScenario('work-first', workFirst, { events: ORDERS.slice(0, 2), batches: [2] });
