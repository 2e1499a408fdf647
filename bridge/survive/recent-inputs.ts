// The stdin writes to a kept CLI, counted, the latest kept (KEEPER_LIMITS: by count and by characters;
// the newest is kept whatever its size). Both sides of an adoption keep them the same way: the keeper
// (as the bridge journals each write: its `j`, or the bytes) and the adopting bridge (the `stdin`
// records since the spawn). A bridge journals each write's record in the same tick as it sends it to
// the keeper; a kill between the two leaves one side a write ahead, and adopt-survivor.ts journals, or
// writes again, the difference (docs/bridge-internals.md#surviving-clis).
import { KEEPER_LIMITS } from '../limits.ts';

export class RecentInputs {
  count = 0;
  readonly recent: string[] = [];
  #chars = 0;

  took(text: string): void {
    this.count++;
    this.recent.push(text);
    this.#chars += text.length;
    while (this.recent.length > KEEPER_LIMITS.recentInputs || (this.#chars > KEEPER_LIMITS.recentInputChars && this.recent.length > 1)) {
      this.#chars -= this.recent.shift()!.length;
    }
  }
}
