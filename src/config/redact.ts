/**
 * `redis://user:secret@host` → `redis://user:REDACTED@host`, and a secret given as a query
 * parameter (`?password=…`, which ioredis takes as the password too) likewise.
 */
export function redactUrlPassword(url: string): string {
  if (url === '') return url;
  try {
    const u = new URL(url);
    if (u.password) u.password = 'REDACTED';
    for (const name of [...u.searchParams.keys()]) if (/pass|secret|token|key|auth|cred/i.test(name)) u.searchParams.set(name, 'REDACTED');
    return u.toString();
  } catch {
    return '[unparseable]';
  }
}
