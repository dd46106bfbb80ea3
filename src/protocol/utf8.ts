// UTF-8 sizes of JS strings, counted the way every encoder on either side writes them: a lone
// surrogate becomes U+FFFD (3 bytes), as Node's Buffer and TextEncoder both encode it. Part of the
// protocol leaf: the byte bounds on names and tokens are checked by it on the server, and the client
// sizes its batches by it, without encoding anything.

/** UTF-8 length of `s` without allocating. */
export function utf8ByteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { n += 4; i++; }
    else n += 3;
  }
  return n;
}
