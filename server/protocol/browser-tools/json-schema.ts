/**
 * valibot → JSON Schema for the subset the built-in declarations use (objects, optional,
 * nullable, pipe with integer/min/max/length/regex/description, picklist, array, record, string,
 * number, boolean, unknown). The general converter (@valibot/to-json-schema) costs ≈ 5 ms cold for
 * the whole catalog at every server start; this walk costs well under 1 ms. A schema kind outside
 * the subset throws at start-up (and in test/unit/builtin-json-schema.test.ts), never silently.
 * The unit test also checks this output equals @valibot/to-json-schema's for every built-in.
 */
import type * as v from 'valibot';

type Node = { type: string; kind?: string; [k: string]: unknown };
type Json = Record<string, unknown>;

export function toJson(schema: v.GenericSchema): Json {
  return convert(schema as unknown as Node);
}

function convert(s: Node): Json {
  // A piped schema carries its base schema's type and `pipe`: [base, ...actions].
  if (Array.isArray(s.pipe)) return pipe(s.pipe as Node[]);
  switch (s.type) {
    case 'string':
      return { type: 'string' };
    case 'number':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'unknown':
      return {};
    case 'picklist': {
      const options = s.options as unknown[];
      const t = options.every((o) => typeof o === 'string') ? 'string' : options.every((o) => typeof o === 'number') ? 'number' : null;
      return t ? { enum: options, type: t } : { enum: options };
    }
    case 'array':
      return { type: 'array', items: convert(s.item as Node) };
    case 'record':
      return { type: 'object', propertyNames: convert(s.key as Node), additionalProperties: convert(s.value as Node) };
    case 'nullable':
      return { anyOf: [convert(s.wrapped as Node), { type: 'null' }] };
    case 'object':
    case 'strict_object': {
      const properties: Json = {};
      const required: string[] = [];
      for (const [key, entry] of Object.entries(s.entries as Record<string, Node>)) {
        const optional = entry.type === 'optional';
        properties[key] = convert(optional ? (entry.wrapped as Node) : entry);
        if (!optional) required.push(key);
      }
      const out: Json = { type: 'object', properties, required };
      if (s.type === 'strict_object') out.additionalProperties = false;
      return out;
    }
    default:
      throw new Error(`Built-in tool schemas: no JSON Schema for valibot "${s.type}"`);
  }
}

/** A pipe: its first item is the schema, the rest are actions that narrow or describe it. */
function pipe(items: Node[]): Json {
  const out = convert(items[0]!);
  const isArray = out.type === 'array';
  for (const a of items.slice(1)) {
    const req = a.requirement;
    switch (a.type) {
      case 'integer':
        out.type = 'integer';
        break;
      case 'min_value':
        out.minimum = req;
        break;
      case 'max_value':
        out.maximum = req;
        break;
      case 'min_length':
        out[isArray ? 'minItems' : 'minLength'] = req;
        break;
      case 'max_length':
        out[isArray ? 'maxItems' : 'maxLength'] = req;
        break;
      case 'regex':
        out.pattern = (req as RegExp).source;
        break;
      case 'description':
        out.description = a.description;
        break;
      default:
        throw new Error(`Built-in tool schemas: no JSON Schema for valibot action "${a.type}"`);
    }
  }
  return out;
}
