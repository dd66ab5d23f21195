// src/k8s/validation/schemas.json against what it stands for: the generated validators are those
// the schema compiles to now, and every field it declares has the type the Kubernetes OpenAPI
// schema gives it (as shipped compiled by kubernetes-models, a devDependency): a value of another
// type at that field is refused by both, a value of the declared type by neither.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validate as kubernetesNode } from 'kubernetes-models/_schemas/IoK8sApiCoreV1Node';
import { validate as kubernetesService } from 'kubernetes-models/_schemas/IoK8sApiCoreV1Service';
import { validate as kubernetesEndpointSlice } from 'kubernetes-models/_schemas/IoK8sApiDiscoveryV1EndpointSlice';
import { describe, expect, it } from 'vitest';
import { validateObject, type ValidatedKind } from '../../src/k8s/validation/validate.js';

const root = join(import.meta.dirname, '../..');

interface Schema {
  type?: string | string[];
  $ref?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema;
  pattern?: string;
}

const schemas = JSON.parse(readFileSync(join(root, 'src/k8s/validation/schemas.json'), 'utf8')) as Record<string, Schema> & { definitions: Record<string, Schema> };

const resolve = (s: Schema): Schema => (s.$ref ? resolve(schemas.definitions[s.$ref.replace('#/definitions/', '')]!) : s);

/** Every declared field: its path (array items as index 0) and its schema. */
function fields(s: Schema, path: (string | number)[] = []): { path: (string | number)[]; schema: Schema }[] {
  const r = resolve(s);
  const out = path.length ? [{ path, schema: r }] : [];
  for (const [k, sub] of Object.entries(r.properties ?? {})) out.push(...fields(sub, [...path, k]));
  if (r.items) out.push(...fields(r.items, [...path, 0]));
  return out;
}

/** A value of the declared type. */
function sample(s: Schema): unknown {
  const t = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (t) {
    case 'string':
      return 'a';
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    default:
      return {};
  }
}

/** A value of none of the declared types. */
function wrong(s: Schema): unknown {
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (!types.includes('object')) return { x: 1 };
  return true;
}

/** The smallest object of the kind that kubernetes-models accepts, for the field tests to change. */
const BASES: Record<ValidatedKind, () => Record<string, unknown>> = {
  Service: () => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: 'a' } }),
  EndpointSlice: () => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'a', namespace: 'a' }, addressType: 'IPv4', endpoints: [] }),
  Node: () => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'a' } }),
};

/** What the Kubernetes schema requires where our schema does not ask for it: filled in so that only the field under test differs. */
const REQUIRED_BY_KUBERNETES: Record<string, Record<string, unknown>> = {
  'spec.ports.0': { port: 1 },
  'endpoints.0': { addresses: [] },
  'endpoints.0.hints.forZones.0': { name: 'a' },
  'endpoints.0.hints.forNodes.0': { name: 'a' },
  'spec.taints.0': { key: 'a', effect: 'NoSchedule' },
  'status.addresses.0': { type: 'InternalIP', address: 'a' },
};

/** The base with `value` at `path`, the containers on the way created (with what each needs). */
function withValue(kind: ValidatedKind, path: (string | number)[], value: unknown): Record<string, unknown> {
  const obj = BASES[kind]();
  let at: Record<string | number, unknown> = obj;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      at[key] = value;
      return;
    }
    const here = path.slice(0, i + 1).join('.');
    const container = typeof path[i + 1] === 'number' ? [] : { ...REQUIRED_BY_KUBERNETES[here] };
    if (at[key] === undefined || (Array.isArray(at[key]) && (at[key] as unknown[]).length === 0)) at[key] = container;
    at = at[key] as Record<string | number, unknown>;
  });
  return obj;
}

type K8sValidate = ((data: unknown) => boolean) & { errors?: { instancePath: string; keyword: string }[] | null };

// kubernetes-models' compiled schemas (its `_schemas/*` export): ajv validators, which leave the
// errors of the last call on the function (not in the package's types).
const KUBERNETES_VALIDATORS: Record<ValidatedKind, K8sValidate> = {
  Service: kubernetesService,
  EndpointSlice: kubernetesEndpointSlice,
  Node: kubernetesNode,
};

describe('k8s validation schema', () => {
  it('validators.generated.ts is what scripts/gen-k8s-validators.mjs makes of schemas.json', () => {
    expect(() => execFileSync(process.execPath, [join(root, 'scripts/gen-k8s-validators.mjs'), '--check'], { stdio: 'pipe' })).not.toThrow();
  });

  for (const kind of ['Service', 'EndpointSlice', 'Node'] as const) {
    it(`${kind}: every declared field has the Kubernetes type: the wrong type refused by both, the right one by neither`, () => {
      const k8s = KUBERNETES_VALIDATORS[kind];
      const declared = fields(schemas[kind]!).filter((f) => !['apiVersion', 'kind'].includes(String(f.path[0])));
      expect(declared.length).toBeGreaterThan(kind === 'Node' ? 10 : 25);
      const disagreements: string[] = [];
      for (const { path, schema } of declared) {
        const pointer = `/${path.join('/')}`;
        // Of the declared type: neither refuses its type (its value may be refused: enums, formats,
        // required members of a sample {} are other rules).
        const good = withValue(kind, path, sample(schema));
        k8s(good);
        const k8sErrors = (k8s.errors ?? []).filter((e) => e.instancePath === pointer && e.keyword === 'type');
        if (k8sErrors.length) disagreements.push(`${pointer}: Kubernetes refuses the type of ${JSON.stringify(sample(schema))}`);
        const ours = validateObject(kind, good);
        if ('reason' in ours && ours.reason.includes(': expected ')) disagreements.push(`${pointer}: we refuse the type of ${JSON.stringify(sample(schema))}: ${ours.reason}`);
        // Of another type: both refuse it, at this field.
        const bad = withValue(kind, path, wrong(schema));
        k8s(bad);
        if (!(k8s.errors ?? []).some((e) => e.instancePath === pointer && e.keyword === 'type')) disagreements.push(`${pointer}: Kubernetes takes ${JSON.stringify(wrong(schema))}`);
        const refused = validateObject(kind, bad);
        if (!('reason' in refused)) disagreements.push(`${pointer}: we take ${JSON.stringify(wrong(schema))}`);
      }
      expect(disagreements).toEqual([]);
    });
  }
});
