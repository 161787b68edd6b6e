/** HTML text with `& < > " '` escaped (every value a page shows goes through it). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:sans-serif;max-width:24rem;margin:4rem auto}label,input,button{display:block;width:100%;margin:.4rem 0}.error{color:#b00020}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

const errorLine = (error?: string) => (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '');

/** The password login page of an auth request. */
export function loginPage(authRequestId: string, error?: string): string {
  return page(
    'Login',
    `<h1>Login</h1>
${errorLine(error)}
<form method="post" action="/oidc/login/password">
<input type="hidden" name="id" value="${escapeHtml(authRequestId)}">
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Login</button>
</form>`,
  );
}

/** The TOTP page of an auth request past its primary factor. */
export function totpPage(authRequestId: string, error?: string): string {
  return page(
    'One-time code',
    `<h1>One-time code</h1>
${errorLine(error)}
<form method="post" action="/oidc/login/totp">
<input type="hidden" name="id" value="${escapeHtml(authRequestId)}">
<label for="code">Code</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" minlength="6" maxlength="8" required>
<button type="submit">Verify</button>
</form>`,
  );
}
