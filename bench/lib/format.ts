// Markdown tables and number formatting for the bench report.

export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]): string => `| ${cells.map(String).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Integer with thousands separators; '–' for a missing value. */
export function int(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '–';
  return Math.round(x).toLocaleString('en-US');
}

/** Fixed decimals; '–' for a missing value. */
export function fix(x: number | undefined, digits = 2): string {
  if (x === undefined || !Number.isFinite(x)) return '–';
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Milliseconds with 3 decimals below 10 ms, 1 above. */
export function ms(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '–';
  return fix(x, x < 10 ? 3 : 1);
}

export function bytesLabel(n: number): string {
  return n >= 1024 && n % 1024 === 0 ? `${n / 1024} KiB` : `${n} B`;
}
