/**
 * A schema inferred from observed values, written as valibot code: types from the values seen,
 * required when present in every sample, a small set of repeated strings as an enum (inputs only),
 * integers apart from other numbers, null as nullable. Outputs use v.looseObject, so fields the
 * app adds later do not fail the tool.
 */
export type Shape =
  | { kind: 'string'; values: Set<string> }
  | { kind: 'number'; integer: boolean }
  | { kind: 'boolean' }
  | { kind: 'array'; items: Shape | null }
  | { kind: 'object'; props: Map<string, Prop>; samples: number }
  | { kind: 'unknown' };

/** A property: its shape over the non-null values seen (null when only nulls), how often present, whether null was seen. */
export interface Prop {
  shape: Shape | null;
  seen: number;
  nullable: boolean;
}

export interface Inferred {
  shape: Shape;
  nullable: boolean;
}

function merge(a: Shape | null, b: Shape): Shape {
  if (!a) return b;
  if (a.kind !== b.kind) {
    // integer vs other numbers is one kind; anything else mixed is unknown.
    return { kind: 'unknown' };
  }
  if (a.kind === 'string' && b.kind === 'string') return { kind: 'string', values: new Set([...a.values, ...b.values]) };
  if (a.kind === 'number' && b.kind === 'number') return { kind: 'number', integer: a.integer && b.integer };
  if (a.kind === 'array' && b.kind === 'array') return { kind: 'array', items: b.items ? merge(a.items, b.items) : a.items };
  if (a.kind === 'object' && b.kind === 'object') {
    const props = new Map(a.props);
    for (const [k, v] of b.props) {
      const cur = props.get(k);
      props.set(k, {
        shape: cur ? (v.shape ? merge(cur.shape, v.shape) : cur.shape) : v.shape,
        seen: (cur?.seen ?? 0) + v.seen,
        nullable: (cur?.nullable ?? false) || v.nullable,
      });
    }
    return { kind: 'object', props, samples: a.samples + b.samples };
  }
  return a;
}

function shapeOf(v: unknown): Shape | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return { kind: 'string', values: new Set([v]) };
  if (typeof v === 'number') return { kind: 'number', integer: Number.isInteger(v) };
  if (typeof v === 'boolean') return { kind: 'boolean' };
  if (Array.isArray(v)) return { kind: 'array', items: v.length ? infer(v).shape : null };
  if (typeof v === 'object') {
    const props = new Map<string, Prop>();
    for (const [k, x] of Object.entries(v)) props.set(k, { shape: shapeOf(x), seen: 1, nullable: x === null });
    return { kind: 'object', props, samples: 1 };
  }
  return { kind: 'unknown' };
}

export function infer(samples: unknown[]): Inferred {
  let shape: Shape | null = null;
  let nullable = false;
  for (const s of samples) {
    const sh = shapeOf(s);
    if (!sh) nullable = true;
    else shape = merge(shape, sh);
  }
  return { shape: shape ?? { kind: 'unknown' }, nullable };
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** A recorded name as an object literal's key (`__proto__: x` would set the prototype, not a field). */
const key = (k: string) => (k === '__proto__' ? '["__proto__"]' : IDENT.test(k) ? k : JSON.stringify(k));

/** valibot code for a shape; `mode` input: strict objects and enums; output: loose objects. */
export function toValibot(s: Shape, mode: 'input' | 'output', samples = 0, indent = ''): string {
  switch (s.kind) {
    case 'string': {
      const values = [...s.values];
      if (mode === 'input' && samples >= 3 && values.length >= 2 && values.length <= 3 && values.every((x) => x.length > 0 && x.length < 30 && /^[\w-]+$/.test(x))) {
        return `v.picklist(${JSON.stringify(values.sort())})`;
      }
      return 'v.string()';
    }
    case 'number':
      return s.integer ? 'v.pipe(v.number(), v.integer())' : 'v.number()';
    case 'boolean':
      return 'v.boolean()';
    case 'array':
      return `v.array(${s.items ? toValibot(s.items, mode, 0, indent) : 'v.unknown()'})`;
    case 'object': {
      if (s.props.size === 0) return mode === 'input' ? 'v.object({})' : 'v.looseObject({})';
      const inner = indent + '  ';
      const lines = [...s.props].map(([k, p]) => {
        const base = p.shape ? toValibot(p.shape, mode, p.seen, inner) : 'v.unknown()';
        const code = p.nullable && p.shape ? `v.nullable(${base})` : base;
        return `${inner}${key(k)}: ${p.seen < s.samples ? `v.optional(${code})` : code},`;
      });
      return `${mode === 'input' ? 'v.object' : 'v.looseObject'}({\n${lines.join('\n')}\n${indent}})`;
    }
    default:
      return 'v.unknown()';
  }
}

export function inferredCode(i: Inferred, mode: 'input' | 'output', samples: number, indent = ''): string {
  const code = toValibot(i.shape, mode, samples, indent);
  return i.nullable ? `v.nullable(${code})` : code;
}
