/**
 * The server extension's API under `/graphlab/` and the shapes it answers with.
 *
 * Requests go through ServerConnection so they carry Jupyter's token and XSRF header: the
 * handlers refuse anything that is not authenticated.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** One lesson notebook of the course folder. */
export interface ILesson {
  path: string; // relative to the server's root, what docmanager:open takes
  id: string; // the notebook's name without .ipynb, the key of the progress store
  number: string;
  title: string;
  exercises: string[];
  passed: string[];
  /** The passed exercises whose pass came after their solution ran in the kernel. */
  revealed: string[];
}

export interface ILessons {
  folder: string;
  lessons: ILesson[];
  done: number;
  total: number;
}

/** Which backend the course runs on, as `graphlab.backend()` says in a fresh Python. */
export interface IBackend {
  name: 'cuda' | 'emulator' | 'unknown';
  label: string;
  gpu: string | null;
  torch: string | null;
  cuda: string | null;
}

/** The absolute URL of an API endpoint (also used as a script src for plotly.js). */
export function apiURL(endPoint: string): string {
  const settings = ServerConnection.makeSettings();
  return URLExt.join(settings.baseUrl, 'graphlab', endPoint);
}

/**
 * Call an endpoint. A server that cannot be reached raises ServerConnection.NetworkError; a
 * refusal raises ServerConnection.ResponseError whose message is the server's one line (its
 * `response.status` says which refusal), as JupyterLab's own clients do.
 */
export async function requestAPI<T>(endPoint: string, init: RequestInit = {}): Promise<T> {
  const settings = ServerConnection.makeSettings();
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(apiURL(endPoint), init, settings);
  } catch (reason) {
    throw new ServerConnection.NetworkError(reason as TypeError);
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new ServerConnection.ResponseError(
      response,
      data.message || `${response.status} ${response.statusText}`
    );
  }
  return data as T;
}

/** POST a JSON body. */
export function postAPI<T>(endPoint: string, body: unknown = {}): Promise<T> {
  return requestAPI<T>(endPoint, { method: 'POST', body: JSON.stringify(body) });
}
