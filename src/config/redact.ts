/** `redis://user:secret@host` → `redis://user:REDACTED@host`. */
export function redactUrlPassword(url: string): string {
  if (url === '') return url;
  try {
    const u = new URL(url);
    if (u.password) u.password = 'REDACTED';
    return u.toString();
  } catch {
    return '[unparseable]';
  }
}
