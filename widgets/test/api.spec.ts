import { ServerConnection } from '@jupyterlab/services';

import { requestAPI } from '../src/api';

// The server is mocked: makeRequest answers what each test says, as jupyterlab-git's tests do.
jest.mock('@jupyterlab/services', () => {
  const actual = jest.requireActual('@jupyterlab/services');
  return {
    ...actual,
    ServerConnection: {
      ...actual.ServerConnection,
      makeSettings: jest.fn(() => ({ baseUrl: 'http://localhost:8888/' })),
      makeRequest: jest.fn()
    }
  };
});

const makeRequest = ServerConnection.makeRequest as jest.Mock;

/** The error a request raised (the tests expect one). */
async function failure(endPoint: string): Promise<ServerConnection.ResponseError> {
  return requestAPI(endPoint).then(
    () => {
      throw new Error(`${endPoint} did not fail`);
    },
    (error: ServerConnection.ResponseError) => error
  );
}

function reply(status: number, body: unknown): Response {
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: status === 200 ? 'OK' : 'Bad Request',
    json: async () => body
  } as unknown as Response;
}

describe('requestAPI', () => {
  afterEach(() => makeRequest.mockReset());

  it('asks the endpoint under /graphlab/ and returns its JSON', async () => {
    makeRequest.mockResolvedValue(reply(200, { done: 1, total: 2 }));
    await expect(requestAPI('lessons')).resolves.toEqual({ done: 1, total: 2 });
    expect(makeRequest.mock.calls[0][0]).toBe('http://localhost:8888/graphlab/lessons');
  });

  it("raises a ResponseError carrying the server's one-line message and status", async () => {
    makeRequest.mockResolvedValue(reply(400, { message: 'trace.json is not a trace' }));
    const error = await failure('trace?path=trace.json');
    expect(error).toBeInstanceOf(ServerConnection.ResponseError);
    expect(error.message).toBe('trace.json is not a trace');
    expect(error.response.status).toBe(400);
  });

  it('falls back to the HTTP status when the refusal has no message', async () => {
    makeRequest.mockResolvedValue(reply(403, 'not json'));
    const error = await failure('lessons');
    expect(error).toBeInstanceOf(ServerConnection.ResponseError);
    expect(error.message).toBe('403 Bad Request');
  });

  it('raises a NetworkError when the server cannot be reached', async () => {
    makeRequest.mockRejectedValue(new TypeError('Failed to fetch'));
    const error = await failure('lessons');
    expect(error).toBeInstanceOf(ServerConnection.NetworkError);
    expect(error.message).toBe('Failed to fetch');
  });
});
