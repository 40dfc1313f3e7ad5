// The dashboard's one way to the server: the management API, as any client calls it. The access
// token lives in memory only; the refresh token is the HttpOnly, SameSite=Strict cookie the
// server sets on /v1/auth, so a reload signs in again without the page ever seeing it.

/** An error the API answered, with the contract's envelope: its code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let accessToken: string | undefined;

/** A CSV file sent as the body as it is (an import), not as JSON. */
export class CsvBody {
  constructor(readonly text: string) {}
}

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  if (accessToken) headers.authorization = `Bearer ${accessToken}`;
  if (body !== undefined) headers['content-type'] = body instanceof CsvBody ? 'text/csv' : 'application/json';
  const payload = body instanceof CsvBody ? body.text : JSON.stringify(body);
  return fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: payload } : {}) });
}

async function failure(res: Response): Promise<ApiError> {
  const envelope = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
  return new ApiError(res.status, envelope.error?.code ?? 'error', envelope.error?.message ?? res.statusText);
}

async function tokens(path: string, body?: unknown): Promise<void> {
  const res = await call('POST', path, body);
  if (!res.ok) throw await failure(res);
  accessToken = ((await res.json()) as { data: { access_token: string } }).data.access_token;
}

/** Signs in with an email and a password. */
export const signIn = (email: string, password: string) => tokens('/v1/auth/login', { email, password });

/** Signs in again from the refresh cookie; false when there is none or it no longer holds. */
export async function resume(): Promise<boolean> {
  try {
    await tokens('/v1/auth/refresh');
    return true;
  } catch {
    return false;
  }
}

export async function signOut(): Promise<void> {
  await call('POST', '/v1/auth/logout').catch(() => undefined);
  accessToken = undefined;
}

/** The `data` of a management API answer; an expired access token is renewed once from the cookie. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res = await call(method, path, body);
  if (res.status === 401 && (await resume())) res = await call(method, path, body);
  if (!res.ok) throw await failure(res);
  if (res.status === 204) return undefined as T;
  return ((await res.json()) as { data: T }).data;
}

/** A file the API answers (a CSV export), as a Blob. */
export async function download(path: string): Promise<Blob> {
  let res = await call('GET', path);
  if (res.status === 401 && (await resume())) res = await call('GET', path);
  if (!res.ok) throw await failure(res);
  return res.blob();
}
