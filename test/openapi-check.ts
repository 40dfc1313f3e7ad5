import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { buildOpenApi } from '../src/http/openapi.ts';

// Every response a test receives from the Management API is checked against
// /v1/openapi.json: a status the document does not list, or a body its schema
// refuses, is a failure of the test that received it (test/harness.ts).

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const MANAGEMENT = /^\/v1\/(organizations|auth|invitations)(\/|$)/;

type Doc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
  components: { schemas: Record<string, object> };
};
let doc: Doc | undefined;
let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

function validator(key: string, schema: object): ValidateFunction {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: false });
    addFormats(ajv);
  }
  let v = compiled.get(key);
  if (!v) {
    // The schema's $refs point into the document's components.
    v = ajv.compile({ ...schema, components: doc!.components });
    compiled.set(key, v);
  }
  return v;
}

/** Why `body` (with `status`) is not what the document says `method routeUrl` answers; undefined when it is. */
export function responseProblem(method: string, routeUrl: string, status: number, type: string, body: string) {
  doc ??= buildOpenApi() as Doc;
  const path = routeUrl.replace(/:([a-z_]+)/g, '{$1}');
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) return `${method} ${path} is not in /v1/openapi.json`;
  const where = `${method} ${path} → ${status}`;
  if (status >= 400) {
    const v = validator('Error', { $ref: '#/components/schemas/Error' });
    return v(JSON.parse(body)) ? undefined : `${where}: error body ${ajv!.errorsText(v.errors)}`;
  }
  const response = op.responses[String(status)];
  if (!response) return `${where}: status not in the document (it lists ${Object.keys(op.responses).join(', ')})`;
  if (status === 204) return body === '' ? undefined : `${where}: a body on 204`;
  if (type.startsWith('application/octet-stream'))
    return response.content?.['application/octet-stream'] ? undefined : `${where}: a file not documented`;
  if (type.startsWith('text/csv')) return response.content?.['text/csv'] ? undefined : `${where}: CSV not documented`;
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return `${where}: no JSON schema`;
  const v = validator(`${method} ${path} ${status}`, schema);
  return v(JSON.parse(body)) ? undefined : `${where}: ${ajv!.errorsText(v.errors)} in ${body.slice(0, 300)}`;
}

/** Records, for every management response, why it disagrees with the document. */
export function checkResponses(server: FastifyInstance, problems: string[]): void {
  server.addHook('onSend', async (req, reply, payload) => {
    const url = req.routeOptions.url;
    if (url && MANAGEMENT.test(url) && (typeof payload === 'string' || payload === null || payload === undefined)) {
      const type = String(reply.getHeader('content-type') ?? '');
      const problem = responseProblem(req.method, url, reply.statusCode, type, payload ?? '');
      if (problem) problems.push(problem);
    }
    return payload;
  });
}
