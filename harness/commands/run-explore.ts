/** `npm run explore`: every crash point of each mode's consumer, or of a team's scenario (harness/studies/explore/). */

import { runEntryPoint } from '../options/run.js';
import { UsageError } from '../options/usage-error.js';
import { explore } from '../studies/explore/command.js';

runEntryPoint('explore', explore, { explained: [UsageError] });
