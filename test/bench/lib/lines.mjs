// Newline framing shared by the two comparison bridges (the AI SDK driver and
// raw ws): the cheapest correct splitter — decode UTF-8 across chunk
// boundaries, cut at '\n', keep the unterminated tail for the next chunk.
import { StringDecoder } from 'node:string_decoder';

/** Calls onLine(line) for each complete line of `stream`; a final unterminated line is flushed at end. */
export function splitLines(stream, onLine) {
  const decoder = new StringDecoder('utf8');
  let tail = '';
  stream.on('data', (chunk) => {
    const text = tail + decoder.write(chunk);
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      onLine(text.slice(start, nl));
      start = nl + 1;
    }
    tail = text.slice(start);
  });
  stream.on('end', () => {
    const rest = tail + decoder.end();
    tail = '';
    if (rest.length > 0) onLine(rest);
  });
}
