/**
 * Fastify's response serializers (fast-json-stringify compiles one function per route and status
 * from its response schema), kept for the process: a second app built in the same process (the
 * test suites build hundreds; a server process builds one) reuses the functions of the first
 * instead of generating and compiling the same code again, about a fifth of an app's start. A
 * serializer is a pure function of its schema, the shared schemas (`app.addSchema`) and the
 * serializer options, which together are the key; the compiler is Fastify's own default.
 */
import type { FastifyServerOptions } from 'fastify';
import { createRequire } from 'node:module';

type Serializer = (data: unknown) => string;
type RouteSchema = { schema: object; method?: string; url?: string; httpStatus?: string; contentType?: string };
type SerializerFactory = (externalSchemas: unknown, serializerOpts: unknown) => (route: RouteSchema) => Serializer;

const require = createRequire(import.meta.url);

let fastifyDefault: SerializerFactory | undefined;
/** The factory Fastify uses when given none (@fastify/fast-json-stringify-compiler, Fastify's dependency). */
function defaultFactory(): SerializerFactory {
  if (!fastifyDefault) {
    const fromFastify = createRequire(require.resolve('fastify'));
    const selector = fromFastify('@fastify/fast-json-stringify-compiler') as () => SerializerFactory;
    fastifyDefault = selector();
  }
  return fastifyDefault;
}

const compiled = new Map<string, Serializer>();

/**
 * For Fastify's `schemaController.compilersFactory.buildSerializer`. A route's serializer is
 * compiled when it first serializes an answer, not when the route is added: a server process
 * answers with a few of its serializers only (a start compiles none of them, nor loads the
 * compiler), and the function that answers is the same one.
 */
export const cachedSerializers: SerializerFactory = (externalSchemas, serializerOpts) => {
  let shared: string | undefined;
  let compile: ((route: RouteSchema) => Serializer) | undefined;
  const serializerOf = (route: RouteSchema): Serializer => {
    shared ??= JSON.stringify([externalSchemas, serializerOpts ?? null]);
    const key = `${shared}\n${JSON.stringify(route.schema)}`;
    let serializer = compiled.get(key);
    if (!serializer) {
      compile ??= defaultFactory()(externalSchemas, serializerOpts);
      serializer = compile(route);
      compiled.set(key, serializer);
    }
    return serializer;
  };
  return (route) => {
    let serializer: Serializer | undefined;
    return (data) => (serializer ??= serializerOf(route))(data);
  };
};

/** For Fastify's `schemaController.compilersFactory.buildValidator`: route schemas never validate (see openapi.ts), so Fastify need not load its validator compiler (ajv). */
export const acceptingValidators = (() => () => () => true) as unknown as NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>['buildValidator'];
