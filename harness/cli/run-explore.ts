/** `npm run explore`: every crash point of each mode's consumer, or of a team's scenario (harness/explore/). */
import { explore } from '../explore/command.js';
import { runEntryPoint } from '../options/run.js';
import { UsageError } from '../options/usage-error.js';

runEntryPoint('explore', explore, { explained: [UsageError] });
