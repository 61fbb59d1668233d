/**
 * The dashboard's sign-in form: plain HTML posted to itself, no script, every value
 * HTML-escaped. The password is never written back into the page.
 */
const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function loginPage(state: { email?: string; error?: string; askTotp?: boolean; next?: string }): string {
  const error = state.error ? `<p class="error" role="alert">${escapeHtml(state.error)}</p>` : '';
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <title>Sign in · Trading queues</title>
  <link rel="icon" type="image/svg+xml" href="/favicon.svg">
  <style>
    body { font-family: system-ui, sans-serif; background: #151a21; color: #e6e9ee; display: grid; place-items: center; min-height: 100vh; margin: 0; }
    form { background: #1f2630; padding: 2rem; border-radius: 8px; width: 20rem; display: grid; gap: 0.75rem; }
    label { display: grid; gap: 0.25rem; font-size: 0.9rem; }
    input { padding: 0.5rem; border-radius: 4px; border: 1px solid #3a4452; background: #151a21; color: inherit; }
    button { padding: 0.6rem; border: 0; border-radius: 4px; background: #3b82f6; color: white; font-weight: 600; cursor: pointer; }
    .error { color: #fca5a5; margin: 0; }
    h1 { font-size: 1.2rem; margin: 0 0 0.5rem; }
  </style>
</head>
<body>
  <form method="post" action="/admin/login">
    <h1>Trading queues</h1>
    <input type="hidden" name="next" value="${escapeHtml(state.next ?? '/admin/queues')}">
    ${error}
    <label>Email <input name="email" type="email" autocomplete="username" required value="${escapeHtml(state.email ?? '')}"></label>
    <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
    <label>Two-factor code${state.askTotp ? '' : ' (if enabled)'} <input name="totp_code" inputmode="numeric" autocomplete="one-time-code"${state.askTotp ? ' required autofocus' : ''}></label>
    <button type="submit">Sign in</button>
  </form>
</body>
</html>`;
}
