// An incremental parser of text/event-stream (the WHATWG rules this service's frames need): lines
// end with \n, \r\n or \r; `field: value` lines fill `event`, `data` (several joined by \n) and `id`;
// a line starting with ':' is a comment (the service's `: open` and `: hb`); a blank line ends a
// frame. Browser-safe.

/** The largest frame accepted. One SSE batch frame carries one committed batch, and a batch may hold
 *  100 MiB of content (more as JSON), so the bound is generous; past it the stream is refused rather
 *  than buffered without end. */
export const SSE_FRAME_CHARS_MAX = 256 * 1024 * 1024;

export interface SseFrame {
  event: string;
  data: string;
  id: string | undefined;
}

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buf = '';
  private event = '';
  private data: string[] = [];
  private dataChars = 0;
  private id: string | undefined;
  private lastWasCr = false;

  /** Feeds bytes; returns the frames completed by them, and counts comments in `comments`. */
  push(chunk: Uint8Array, out: { frames: SseFrame[]; comments: number }): void {
    this.buf += this.decoder.decode(chunk, { stream: true });
    let start = 0;
    for (;;) {
      let nl = -1;
      for (let i = start; i < this.buf.length; i++) {
        const c = this.buf.charCodeAt(i);
        if (c === 10 || c === 13) { nl = i; break; }
      }
      if (nl < 0) break;
      const c = this.buf.charCodeAt(nl);
      // "\r\n": the \n after a \r that ended the previous line ends nothing.
      if (c === 10 && nl === start && this.lastWasCr) { this.lastWasCr = false; start = nl + 1; continue; }
      this.lastWasCr = c === 13;
      this.line(this.buf.slice(start, nl), out);
      start = nl + 1;
    }
    this.buf = this.buf.slice(start);
    if (this.buf.length + this.dataChars > SSE_FRAME_CHARS_MAX) throw new RangeError(`an SSE frame is larger than ${SSE_FRAME_CHARS_MAX} characters`);
  }

  private line(line: string, out: { frames: SseFrame[]; comments: number }): void {
    if (line.length === 0) {
      if (this.data.length > 0 || this.event !== '') {
        out.frames.push({ event: this.event === '' ? 'message' : this.event, data: this.data.join('\n'), id: this.id });
      }
      this.event = '';
      this.data = [];
      this.dataChars = 0;
      this.id = undefined;
      return;
    }
    if (line.charCodeAt(0) === 58) { out.comments++; return; }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') { this.data.push(value); this.dataChars += value.length; }
    else if (field === 'event') this.event = value;
    else if (field === 'id') this.id = value;
  }
}
